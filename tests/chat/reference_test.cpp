// Every real chat template x every conversation x flags, rendered by hadron and by jinja2 (as
// transformers configures it) at test time: the bytes must match, and errors must match errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template_loader.h"
#include "core/error.h"
#include "reference_runner.h"

namespace hadron::chat::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct NamedTemplate {
  std::string name;
  std::string source;
  std::string bos_token;
  std::string eos_token;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// tests/data/chat-templates/*/*.jinja, and every model folder under tests/data/configs
// that has a template (chat_template.jinja or tokenizer_config.json's chat_template).
std::vector<NamedTemplate> collect_templates() {
  fs::path data = HADRON_TEST_DATA_DIR;
  std::vector<NamedTemplate> out;
  for (const fs::path& group : sorted_entries(data / "chat-templates"))
    for (const fs::path& file : sorted_entries(group))
      if (file.extension() == ".jinja")
        out.push_back({group.filename().string() + "/" + file.filename().string(), slurp(file),
                       "<s>", "</s>"});
  for (const fs::path& model : sorted_entries(data / "configs")) {
    if (!fs::exists(model / "chat_template.jinja") && !fs::exists(model / "tokenizer_config.json"))
      continue;
    try {
      ModelChatTemplate t = load_chat_template(model);
      out.push_back({"configs/" + model.filename().string(), t.source, t.bos_token, t.eos_token});
    } catch (const InputError&) {
      // a tokenizer_config.json without a chat template
    }
  }
  return out;
}

std::vector<std::pair<std::string, ordered_json>> collect_conversations() {
  std::vector<std::pair<std::string, ordered_json>> out;
  for (const fs::path& file :
       sorted_entries(fs::path(HADRON_SOURCE_DIR) / "tests/chat/conversations"))
    if (file.extension() == ".json")
      out.emplace_back(file.stem().string(), ordered_json::parse(slurp(file)));
  return out;
}

// The variables transformers' apply_chat_template passes: messages, tools (None when absent),
// documents, add_generation_prompt, the special tokens, and extra kwargs (enable_thinking).
ordered_json make_context(const ordered_json& conversation, const NamedTemplate& t,
                          bool add_generation_prompt, int enable_thinking) {
  ordered_json ctx;
  ctx["messages"] = conversation["messages"];
  ctx["tools"] = conversation.contains("tools") ? conversation["tools"] : ordered_json(nullptr);
  ctx["documents"] = nullptr;
  ctx["add_generation_prompt"] = add_generation_prompt;
  ctx["bos_token"] = t.bos_token;
  ctx["eos_token"] = t.eos_token;
  if (enable_thinking >= 0) ctx["enable_thinking"] = enable_thinking == 1;
  return ctx;
}

TEST(ChatTemplateReference, AllTemplatesAllConversationsMatchTransformers) {
  std::vector<NamedTemplate> templates = collect_templates();
  auto conversations = collect_conversations();
  ASSERT_GE(templates.size(), 18u) << "chat templates missing under " << HADRON_TEST_DATA_DIR;
  ASSERT_GE(conversations.size(), 10u);
  std::vector<RenderCase> cases;
  for (const NamedTemplate& t : templates)
    for (const auto& [conv_name, conv] : conversations)
      for (bool agp : {false, true})
        for (int thinking : {-1, 0, 1}) {
          std::string label = t.name + " x " + conv_name + " agp=" + std::to_string(agp) +
                              " thinking=" + std::to_string(thinking);
          cases.push_back({label, t.name, t.source, make_context(conv, t, agp, thinking)});
        }
  int n_mismatch = compare_with_reference(cases);
  std::cout << cases.size() << " renders compared, " << n_mismatch << " mismatches\n";
  EXPECT_EQ(n_mismatch, 0);
}

}  // namespace
}  // namespace hadron::chat::testing
