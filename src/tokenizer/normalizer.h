// Normalizers of Hugging Face tokenizers: NFC, NFKC, NFD, NFKD (utf8proc), Prepend, Replace,
// BertNormalizer, Lowercase and Sequence (flattened into the list of steps).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tokenizer/regex.h"

namespace hadron::tok {

class Normalizer {
 public:
  // Builds from the "normalizer" object of tokenizer.json (null: no normalizer).
  // Throws InputError for an unknown or malformed normalizer.
  static Normalizer from_json(const nlohmann::json& json);

  // Normalizes valid UTF-8 `text` in place.
  void normalize(std::string& text) const;
  bool empty() const { return steps_.empty(); }

 private:
  enum class Kind { kNfc, kNfkc, kNfd, kNfkd, kPrepend, kReplace, kBertStep };
  struct Step {
    Kind kind;
    std::string text;                    // Prepend: the prefix; Replace: the pattern string
    std::string content;                 // Replace: the replacement
    std::shared_ptr<const Regex> regex;  // Replace with a Regex pattern
    void (*bert_step)(std::string& text) = nullptr;  // one of the character steps below
  };
  void add_from_json(const nlohmann::json& json);
  static void apply(const Step& step, std::string& text);

  std::vector<Step> steps_;
};

// Steps of HF's BertNormalizer on valid UTF-8 (bert_text.cpp): drop NUL, U+FFFD and control
// characters other than \t \n \r and write whitespace as ' '; put spaces around CJK
// ideographs; drop nonspacing marks (Mn); lowercase as Rust's char::to_lowercase.
void bert_clean_text(std::string& text);
void pad_chinese_chars(std::string& text);
void strip_nonspacing_marks(std::string& text);
void lowercase(std::string& text);

// True when NFC never changes `cp` nor the characters around it (used to skip utf8proc).
bool nfc_inert(char32_t cp);

// Replaces every (non-overlapping, left to right) occurrence of `pattern` in `text`.
std::string replace_all(const std::string& text, const std::string& pattern,
                        const std::string& content);
std::string replace_all(const std::string& text, const Regex& pattern, const std::string& content);

}  // namespace hadron::tok
