// Pre-tokenizers of Hugging Face tokenizers: Split (PCRE2 regex or literal), Punctuation,
// BertPreTokenizer, ByteLevel, Metaspace, Digits and Sequence (flattened into the list of steps).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/function_ref.h"
#include "tokenizer/regex.h"

namespace hadron::tok {

// Receives one word for the model and whether it starts at offset 0 of the input.
using WordSink = FunctionRef<void(std::string_view word, bool at_start)>;

class PreTokenizer {
 public:
  // Builds from the "pre_tokenizer" object of tokenizer.json (null: the whole piece is a word).
  // With a ByteLevel step the model gets raw bytes (see byte_level()); steps after it split
  // the words written in the byte alphabet.
  static PreTokenizer from_json(const nlohmann::json& json);

  // Splits one normalized piece of text into words.
  void split(std::string_view piece, bool at_start, WordSink sink) const {
    run(0, piece, at_start, sink);
  }
  // True when a ByteLevel step maps words to the GPT-2 byte alphabet (left to the model).
  bool byte_level() const { return byte_level_; }

 private:
  enum class Kind { kSplit, kByteLevel, kMetaspace, kDigits };
  enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
  enum class PrependScheme { kAlways, kFirst, kNever };
  struct Step {
    Kind kind;
    std::shared_ptr<const Regex> regex;  // Split (regex pattern); ByteLevel with use_regex
    std::string literal;                 // Split with a String pattern; Metaspace replacement
    Behavior behavior = Behavior::kIsolated;
    bool invert = false;
    bool flag = false;  // ByteLevel: add_prefix_space; Metaspace: split; Digits: individual
    PrependScheme prepend_scheme = PrependScheme::kAlways;
  };
  struct Span {
    size_t start, end;
    bool is_match;
  };

  void add_from_json(const nlohmann::json& json);
  void run(size_t step_idx, std::string_view piece, bool at_start, WordSink sink) const;
  void run_split(const Step& step, size_t next, std::string_view piece, bool at_start,
                 WordSink sink) const;
  void run_after_byte_level(const Step& step, size_t next, std::string_view piece, bool at_start,
                            WordSink sink) const;
  void run_metaspace(const Step& step, size_t next, std::string_view piece, bool at_start,
                     WordSink sink) const;
  static Behavior behavior_from_json(const nlohmann::json& json);
  static std::vector<Span> find_spans(const Step& step, std::string_view piece);
  static std::vector<Span> apply_behavior(std::vector<Span> spans, Behavior behavior);

  std::vector<Step> steps_;
  bool byte_level_ = false;
};

}  // namespace hadron::tok
