// Decoders of Hugging Face tokenizers: ByteLevel, Metaspace, ByteFallback, Fuse, Strip,
// Replace, WordPiece and Sequence (flattened), applied to the token strings of a sequence of ids.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tokenizer/regex.h"

namespace hadron::tok {

class Decoder {
 public:
  // Builds from the "decoder" object of tokenizer.json (null: tokens are joined with spaces).
  static Decoder from_json(const nlohmann::json& json);

  // The text of `tokens` (Decoder::decode of HF: decode_chain, then concatenation).
  std::string decode(std::vector<std::string> tokens) const;

  // True when the decoder is a single ByteLevel step: the text is then the UTF-8-lossy
  // concatenation of byte_level_bytes() of each token, which callers may precompute.
  bool byte_level_only() const;
  bool has_byte_fallback() const;
  // False when a token's text can depend on tokens before it beyond the first one (Strip of
  // more than one leading character, or of trailing characters): streaming must then decode
  // from the start of the sequence.
  bool is_local() const;
  // A "<0xXX>" token that ByteFallback turns into a byte.
  static bool is_byte_token(const std::string& token);
  // ByteLevel's bytes for one token: its GPT-2 bytes, or its UTF-8 when a character is unmapped.
  static std::string byte_level_bytes(const std::string& token);

 private:
  enum class Kind { kByteLevel, kMetaspace, kByteFallback, kFuse, kStrip, kReplace, kWordPiece };
  struct Step {
    Kind kind;
    std::string text;     // Metaspace: replacement; Strip: content; Replace: pattern string;
                          // WordPiece: the continuation prefix
    std::string content;  // Replace: the replacement
    std::shared_ptr<const Regex> regex;  // Replace with a Regex pattern
    size_t start = 0, stop = 0;          // Strip
    bool prepend = true;  // Metaspace: prepend_scheme is not "never"; WordPiece: cleanup
  };
  void add_from_json(const nlohmann::json& json);
  static void apply(const Step& step, std::vector<std::string>& tokens);
  static void byte_fallback(std::vector<std::string>& tokens);
  static void strip(const Step& step, std::string& token);
  static void wordpiece(const Step& step, std::vector<std::string>& tokens);

  std::vector<Step> steps_;
  bool present_ = false;
};

}  // namespace hadron::tok
