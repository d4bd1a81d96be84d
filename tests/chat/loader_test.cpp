// Finding a model folder's template and special tokens, on the test data's configs and on
// synthetic folders for the other layouts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "chat/chat_template_loader.h"
#include "chat/template.h"
#include "core/error.h"

namespace hadron::chat {
namespace {

namespace fs = std::filesystem;

fs::path configs() { return fs::path(HADRON_TEST_DATA_DIR) / "configs"; }

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() / ("hadron-chat-loader-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(ChatTemplateLoader, ReadsJinjaFileAndAddedTokenDicts) {
  ModelChatTemplate kimi = load_chat_template(configs() / "moonshotai__Kimi-K2-Instruct");
  EXPECT_NE(kimi.origin.find("chat_template.jinja"), std::string::npos);
  EXPECT_EQ(kimi.bos_token, "[BOS]");
  EXPECT_EQ(kimi.eos_token, "[EOS]");
  ModelChatTemplate ds = load_chat_template(configs() / "deepseek-ai__DeepSeek-V3");
  EXPECT_EQ(ds.bos_token, "<｜begin▁of▁sentence｜>");  // given as an AddedToken object
  EXPECT_EQ(ds.eos_token, "<｜end▁of▁sentence｜>");
  ModelChatTemplate qwen = load_chat_template(configs() / "Qwen__Qwen3-0.6B");
  EXPECT_NE(qwen.origin.find("tokenizer_config.json"), std::string::npos);
  EXPECT_EQ(qwen.bos_token, "");  // null in the config
  EXPECT_EQ(qwen.eos_token, "<|im_end|>");
  EXPECT_NO_THROW(ChatTemplate::parse(qwen.source));
}

TEST(ChatTemplateLoader, NamedTemplateListsAndMissingTemplates) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"chat_template": [
      {"name": "default", "template": "D{{ bos_token }}"},
      {"name": "tool_use", "template": "T"}], "bos_token": "<s>"})");
  dir.write("special_tokens_map.json", R"({"eos_token": {"content": "</s>", "special": true}})");
  ModelChatTemplate t = load_chat_template(dir.path());
  EXPECT_EQ(t.source, "D{{ bos_token }}");
  EXPECT_EQ(t.bos_token, "<s>");
  EXPECT_EQ(t.eos_token, "</s>");  // from special_tokens_map.json
  EXPECT_EQ(load_chat_template(dir.path(), "tool_use").source, "T");
  EXPECT_THROW(load_chat_template(dir.path(), "rag"), InputError);

  dir.write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  EXPECT_THROW(load_chat_template(dir.path()), InputError);
  dir.write("tokenizer_config.json", R"({"chat_template": 3})");
  EXPECT_THROW(load_chat_template(dir.path()), InputError);
  dir.write("tokenizer_config.json", "{not json");
  EXPECT_THROW(load_chat_template(dir.path()), InputError);
  dir.write("chat_template.json", R"({"chat_template": "J"})");
  EXPECT_THROW(load_chat_template(dir.path()), InputError);  // the broken tokenizer_config
  dir.write("tokenizer_config.json", "{}");
  EXPECT_EQ(load_chat_template(dir.path()).source, "J");
  dir.write("chat_template.jinja", "F");
  EXPECT_EQ(load_chat_template(dir.path()).source, "F");  // the .jinja file wins
}

}  // namespace
}  // namespace hadron::chat
