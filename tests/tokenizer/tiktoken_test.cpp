// Tokenizers built from tiktoken files: o200k_base's real ranks (the part the corpus needs, see
// tiktoken_subset.mjs) with gpt-oss's tokenizer_config.json against gpt-oss's tokenizer.json in
// Hugging Face tokenizers, the same ranks as a Kimi tiktoken.model against tiktoken itself, and
// small files written here for rank order, Kimi's split and reserved tokens, and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"
#include "reference_data.h"
#include "tokenizer/tokenizer.h"

namespace hadron::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kData = fs::path(HADRON_SOURCE_DIR) / "tests" / "data";

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = 0;
    for (size_t j = 0; j < 3; ++j)
      group = group << 8 | (i + j < bytes.size() ? static_cast<unsigned char>(bytes[i + j]) : 0);
    for (size_t j = 0; j < 4; ++j)
      out += j <= bytes.size() - i ? kDigits[(group >> (18 - 6 * j)) & 63] : '=';
  }
  return out;
}

// A fresh model folder under the test temp directory.
class Folder {
 public:
  explicit Folder(const std::string& name)
      : path_(fs::temp_directory_path() /
              ("hadron-tiktoken-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Folder() { fs::remove_all(path_); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }
  std::string str() const { return path_.string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The 256 bytes at ranks 0..255, then `tokens` from rank 256 on.
std::string tiktoken_text(const std::vector<std::string>& tokens) {
  std::string text;
  for (int byte = 0; byte < 256; ++byte)
    text += base64(std::string(1, static_cast<char>(byte))) + " " + std::to_string(byte) + "\n";
  for (size_t i = 0; i < tokens.size(); ++i)
    text += base64(tokens[i]) + " " + std::to_string(256 + i) + "\n";
  return text;
}

std::string added_tokens_config(const std::map<int, std::string>& tokens) {
  json decoder = json::object();
  for (const auto& [id, content] : tokens) {
    decoder[std::to_string(id)] = {{"content", content},   {"lstrip", false},
                                   {"normalized", false},  {"rstrip", false},
                                   {"single_word", false}, {"special", true}};
  }
  return json({{"added_tokens_decoder", decoder}}).dump();
}

std::string load_error(const std::string& dir) {
  try {
    Tokenizer::load(dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Tiktoken, O200kMatchesGptOssTokenizerJson) {
  Folder folder("o200k");
  fs::copy_file(kData / "tokenizers/openai__o200k_base-corpus/o200k_base.tiktoken",
                folder.path() / "o200k_base.tiktoken");
  fs::copy_file(kData / "configs/openai__gpt-oss-120b/tokenizer_config.json",
                folder.path() / "tokenizer_config.json");
  const Tokenizer tokenizer = Tokenizer::load(folder.str());
  const json reference = reference_results("gptoss");
  std::map<std::pair<std::string, size_t>, const CorpusSample*> by_key;
  for (const CorpusSample& sample : corpus_samples()) by_key[{sample.file, sample.index}] = &sample;
  size_t n_samples = 0, n_ids = 0;
  for (const json& expected : reference.at("samples")) {
    const CorpusSample& sample = *by_key.at({expected.at("file"), expected.at("index")});
    const auto ids = expected.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.encode(sample.bytes, false), ids) << sample.file << "#" << sample.index;
    EXPECT_EQ(tokenizer.encode(sample.bytes, true), expected.at("ids_special"));
    EXPECT_EQ(tokenizer.decode(ids, false), expected.at("text").get<std::string>());
    EXPECT_EQ(tokenizer.decode(ids, true), expected.at("text_skip").get<std::string>());
    ++n_samples;
    n_ids += ids.size();
  }
  std::printf("[o200k tiktoken] %zu samples, %zu ids\n", n_samples, n_ids);
  EXPECT_GT(n_ids, 1000u);
  EXPECT_EQ(tokenizer.token_to_id("<|return|>"), 200002);
  EXPECT_TRUE(tokenizer.is_special(200002));
}

// Kimi's split regex, which is in no tokenizer.json: tiktoken itself with o200k's ranks and
// tokenization_kimi.py's pattern (reference.mjs) against the same ranks as a tiktoken.model.
TEST(Tiktoken, KimiSplitMatchesTiktoken) {
  Folder folder("kimi-o200k");
  fs::copy_file(kData / "tokenizers/openai__o200k_base-corpus/o200k_base.tiktoken",
                folder.path() / "tiktoken.model");
  const Tokenizer tokenizer = Tokenizer::load(folder.str());
  std::map<std::pair<std::string, size_t>, const CorpusSample*> by_key;
  for (const CorpusSample& sample : corpus_samples()) by_key[{sample.file, sample.index}] = &sample;
  const json reference = reference_results("tiktoken_kimi_split");
  const json o200k = reference_results("gptoss");
  size_t n_ids = 0, n_differ_from_o200k = 0;
  for (size_t i = 0; i < reference.at("samples").size(); ++i) {
    const json& expected = reference.at("samples")[i];
    const CorpusSample& sample = *by_key.at({expected.at("file"), expected.at("index")});
    const auto ids = expected.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.encode(sample.bytes, false), ids) << sample.file << "#" << sample.index;
    n_ids += ids.size();
    // (gpt-oss's special tokens make special_tokens.txt differ for another reason.)
    if (sample.file != "special_tokens.txt")
      n_differ_from_o200k += ids != o200k.at("samples")[i].at("ids");
  }
  std::printf("[kimi split] %zu ids, %zu samples split unlike o200k\n", n_ids, n_differ_from_o200k);
  EXPECT_GT(n_differ_from_o200k, 0u);  // the corpus exercises what Kimi's regex changes
}

// Ranks 256 "bc", 257 "ab", 258 "abc": "abcc" joins "bc" first (lowest rank), then "abc", where
// joining left to right would give "ab" "c" "c". A piece that is a token is taken whole.
TEST(Tiktoken, MergesByRankAndDecodes) {
  Folder folder("ranks");
  folder.write("o200k_base.tiktoken", tiktoken_text({"bc", "ab", "abc"}));
  folder.write("tokenizer_config.json", added_tokens_config({{259, "<|end|>"}}));
  const Tokenizer tokenizer = Tokenizer::load(folder.str());
  EXPECT_EQ(tokenizer.encode("abcc", false), (std::vector<int32_t>{258, 'c'}));
  EXPECT_EQ(tokenizer.encode("abc", false), std::vector<int32_t>{258});
  const std::vector<int32_t> ids = tokenizer.encode("abcc<|end|> ab", false);
  EXPECT_EQ(ids, (std::vector<int32_t>{258, 'c', 259, ' ', 257}));
  EXPECT_EQ(tokenizer.decode(ids, false), "abcc<|end|> ab");
  EXPECT_EQ(tokenizer.decode(ids, true), "abcc ab");
  EXPECT_EQ(tokenizer.id_to_token(' '), "\xC4\xA0");  // byte-level alphabet, as tokenizer.json
  EXPECT_EQ(tokenizer.vocab_size(), 260);
}

// Kimi's split keeps runs of Han characters apart from other letters (o200k's would not), and
// its tokenizer names the 256 ids after the ranks.
TEST(Tiktoken, KimiSplitAndReservedTokens) {
  Folder folder("kimi");
  folder.write("tiktoken.model", tiktoken_text({"ab", "\xE4\xB8\xAD\xE6\x96\x87"}));  // 中文
  folder.write("tokenizer_config.json", added_tokens_config({{258, "[BOS]"}, {260, "[EOS]"}}));
  const Tokenizer tokenizer = Tokenizer::load(folder.str());
  EXPECT_EQ(tokenizer.encode("ab\xE4\xB8\xAD\xE6\x96\x87", false),
            (std::vector<int32_t>{256, 257}));
  EXPECT_EQ(tokenizer.encode("[BOS]ab", false), (std::vector<int32_t>{258, 256}));
  // U+3002 is not Han, though its Script_Extensions include Han (PCRE2's plain \p{Han}).
  EXPECT_EQ(tokenizer.encode("\xE4\xB8\xAD\xE6\x96\x87\xE3\x80\x82", false),
            (std::vector<int32_t>{257, 0xE3, 0x80, 0x82}));
  EXPECT_EQ(tokenizer.vocab_size(), 258 + 256);
  EXPECT_EQ(tokenizer.id_to_token(259), "<|reserved_token_259|>");
  EXPECT_TRUE(tokenizer.is_special(259));
  EXPECT_EQ(tokenizer.id_to_token(260), "[EOS]");

  Folder o200k("kimi-text-as-o200k");
  o200k.write("o200k_base.tiktoken", tiktoken_text({"ab", "\xE4\xB8\xAD\xE6\x96\x87"}));
  EXPECT_NE(Tokenizer::load(o200k.str()).encode("ab\xE4\xB8\xAD\xE6\x96\x87", false),
            (std::vector<int32_t>{256, 257}));
}

TEST(Tiktoken, ClearErrors) {
  Folder folder("errors");
  EXPECT_FALSE(Tokenizer::folder_has_tokenizer(folder.str()));
  EXPECT_NE(load_error(folder.str()).find("neither tokenizer.json"), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"YQ== 0\n!!!! 1\n", "line 2"},
      {"YQ== 0\nYg== 0\n", "rank 0 is listed twice"},
      {"YQ== 0\nYQ== 1\n", "listed twice"},
      {"YQ== x\n", "not a token id"},
      {"YQ== 99999999999\n", "not a token id (0 to 16777216)"},
      {"YQ==\n", "line 1"},
      {"", "no tokens"},
  };
  for (const auto& [text, want] : cases) {
    folder.write("o200k_base.tiktoken", text);
    EXPECT_TRUE(Tokenizer::folder_has_tokenizer(folder.str()));
    const std::string error = load_error(folder.str());
    EXPECT_NE(error.find(want), std::string::npos) << text << " -> " << error;
    EXPECT_NE(error.find("o200k_base.tiktoken"), std::string::npos) << error;
  }
  fs::remove(folder.path() / "o200k_base.tiktoken");
  folder.write("p50k_base.tiktoken", "YQ== 0\n");
  EXPECT_NE(load_error(folder.str()).find("not a known family (known: o200k_base.tiktoken"),
            std::string::npos)
      << load_error(folder.str());
}

}  // namespace
}  // namespace hadron::test
