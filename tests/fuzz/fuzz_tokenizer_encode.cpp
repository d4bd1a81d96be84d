// libFuzzer: any bytes encode with real tokenizers (the default model's byte-level BPE, and a
// SentencePiece-style BPE with byte fallback) without throwing; the ids are in the vocabulary,
// the decoded text is valid UTF-8, and streaming the ids gives the same text.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.h"
#include "tokenizer/tokenizer.h"

namespace {

// A small SentencePiece-style tokenizer: all 256 byte tokens, a few words, Metaspace.
std::string byte_fallback_json() {
  std::string vocab = R"("<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 259, "a": 260, "b": 261,)"
                      R"( "\u2581a": 262, "ab": 263, "\u2581ab": 264)";
  for (int b = 0; b < 256; ++b) vocab += fmt::format(R"(, "<0x{:02X}>": {})", b, 3 + b);
  return R"({"added_tokens": [{"id": 1, "content": "<s>", "special": true, "normalized": false},)"
         R"( {"id": 2, "content": "</s>", "special": true, "normalized": false}],)"
         R"( "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",)"
         R"( "prepend_scheme": "first", "split": false},)"
         R"( "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}},)"
         R"( {"Sequence": {"id": "A"}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1]}}},)"
         R"( "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"},)"
         R"( "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},)"
         R"( {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},)"
         R"( "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,)"
         R"( "vocab": {)" +
         vocab + R"(}, "merges": ["a b", "\u2581 a", "\u2581a b"]}})";
}

const hadron::Tokenizer& byte_level() {
  static const hadron::Tokenizer tokenizer =
      hadron::Tokenizer::load(HADRON_SOURCE_DIR "/models/default");
  return tokenizer;
}

const hadron::Tokenizer& byte_fallback() {
  static const hadron::Tokenizer tokenizer =
      hadron::Tokenizer::from_json_text(byte_fallback_json(), "fuzz");
  return tokenizer;
}

void check(const hadron::Tokenizer& tokenizer, std::string_view text, bool add_special) {
  const std::vector<int32_t> ids = tokenizer.encode(text, add_special);
  for (const int32_t id : ids) {
    if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();
  }
  for (const bool skip : {false, true}) {
    const std::string whole = tokenizer.decode(ids, skip);
    if (!hadron::is_valid_utf8(whole)) __builtin_trap();
    hadron::IncrementalDecoder stream(tokenizer, skip);
    std::string joined;
    for (const int32_t id : ids) joined += stream.push(id);
    joined += stream.finish();
    if (joined != whole) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(byte_level(), text, size % 2 == 0);
  check(byte_fallback(), text, size % 2 == 1);
  return 0;
}
