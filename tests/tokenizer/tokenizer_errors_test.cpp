// Broken or unsupported tokenizer files are InputErrors that name the problem, never crashes.
#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace hadron::test {
namespace {

const char* kMinimal =
    R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})";

std::string error_of(const std::string& json_text) {
  try {
    Tokenizer::from_json_text(json_text, "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenizerErrors, MinimalFileWorks) {
  const Tokenizer tokenizer = Tokenizer::from_json_text(kMinimal, "test.json");
  EXPECT_EQ(tokenizer.encode("ab", false), std::vector<int32_t>{2});
  EXPECT_EQ(tokenizer.encode("ba", false), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(tokenizer.decode(std::vector<int32_t>{2, 0}, false), "ab a");  // no decoder: spaces
}

TEST(TokenizerErrors, ClearMessages) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "malformed"},
      {"[]", "malformed"},
      {R"({"model": {"type": "Unigram", "vocab": []}})", "Unigram"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})",
       "missing from the vocabulary"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}})",
       "makes \"ab\""},
      {R"({"model": {"type": "BPE", "vocab": {"a": -3}, "merges": []}})", "negative"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}})", "not two tokens"},
      {R"({"normalizer": {"type": "StripAccents"}, "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "StripAccents"},
      {R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})", "unk_token \"[UNK]\" is not in"},
      {R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(("}, "behavior": "Isolated"},
           "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "does not compile"},
      {R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways"},
           "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "Sideways"},
      {R"({"decoder": {"type": "CTC"}, "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "CTC"},
      {R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Metaspace"}]},
           "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "Metaspace pre-tokenizer after ByteLevel"},
      {R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "ByteLevel"}]},
           "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "more than one ByteLevel"},
      {R"({"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}],
           "special_tokens": {}}, "model": {"type": "BPE", "vocab": {}, "merges": []}})",
       "<s>"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}})", "dropout"},
  };
  for (const auto& [json_text, expected] : cases) {
    const std::string message = error_of(json_text);
    EXPECT_NE(message.find("test.json"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << json_text << "\n -> " << message;
  }
}

TEST(TokenizerErrors, MissingFiles) {
  EXPECT_THROW(Tokenizer::load("/nonexistent/tokenizer.json"), InputError);
  EXPECT_THROW(Tokenizer::load("/"), InputError);
}

}  // namespace
}  // namespace hadron::test
