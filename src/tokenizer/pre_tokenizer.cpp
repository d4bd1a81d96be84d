#include "tokenizer/pre_tokenizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pattern_json.h"
#include "tokenizer/split_patterns.h"

namespace hadron::tok {
namespace {

// Rust's char::is_numeric: general categories Nd, Nl and No.
bool is_numeric(char32_t cp) {
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL ||
         category == UTF8PROC_CATEGORY_NO;
}

// One punctuation character as HF's Punctuation pre-tokenizer sees it: Rust's
// is_ascii_punctuation or a Unicode punctuation category.
constexpr const char* kPunctuationPattern = R"([\p{P}!-/:-@\[-`{-~])";

// Runs of Rust's char::is_whitespace (the White_Space property).
constexpr const char* kWhiteSpacePattern =
    R"([\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]+)";

}  // namespace

PreTokenizer::Behavior PreTokenizer::behavior_from_json(const nlohmann::json& json) {
  static const std::vector<std::pair<std::string, Behavior>> kBehaviors = {
      {"Removed", Behavior::kRemoved},
      {"Isolated", Behavior::kIsolated},
      {"MergedWithPrevious", Behavior::kMergedWithPrevious},
      {"MergedWithNext", Behavior::kMergedWithNext},
      {"Contiguous", Behavior::kContiguous}};
  const std::string behavior = json.get<std::string>();
  const auto it = std::find_if(kBehaviors.begin(), kBehaviors.end(),
                               [&](const auto& entry) { return entry.first == behavior; });
  if (it == kBehaviors.end()) input_error("tokenizer: Split behavior \"{}\" is unknown", behavior);
  return it->second;
}

PreTokenizer PreTokenizer::from_json(const nlohmann::json& json) {
  PreTokenizer pre_tokenizer;
  if (!json.is_null()) pre_tokenizer.add_from_json(json);
  const auto n_byte_level =
      std::count_if(pre_tokenizer.steps_.begin(), pre_tokenizer.steps_.end(),
                    [](const Step& step) { return step.kind == Kind::kByteLevel; });
  if (n_byte_level > 1) input_error("tokenizer: more than one ByteLevel pre-tokenizer");
  pre_tokenizer.byte_level_ = n_byte_level == 1;
  // After ByteLevel, words are in the byte alphabet; only splits keep them there.
  bool after_byte_level = false;
  for (const Step& step : pre_tokenizer.steps_) {
    if (after_byte_level && step.kind == Kind::kMetaspace) {
      input_error("tokenizer: a Metaspace pre-tokenizer after ByteLevel is not supported");
    }
    after_byte_level |= step.kind == Kind::kByteLevel;
  }
  return pre_tokenizer;
}

void PreTokenizer::add_from_json(const nlohmann::json& json) {
  const std::string type = json.at("type").get<std::string>();
  Step step{};
  if (type == "Sequence") {
    for (const nlohmann::json& child : json.at("pretokenizers")) add_from_json(child);
    return;
  }
  if (type == "Split") {
    Pattern pattern = pattern_from_json(json.at("pattern"));
    step = {Kind::kSplit, std::move(pattern.regex), std::move(pattern.literal)};
    step.behavior = behavior_from_json(json.at("behavior"));
    step.invert = json.value("invert", false);
  } else if (type == "Punctuation") {
    step.kind = Kind::kSplit;
    step.regex = std::make_shared<const Regex>(kPunctuationPattern);
    step.behavior = behavior_from_json(json.value("behavior", nlohmann::json("Isolated")));
  } else if (type == "BertPreTokenizer") {  // split on whitespace, isolate punctuation
    steps_.push_back(
        {Kind::kSplit, std::make_shared<const Regex>(kWhiteSpacePattern), {}, Behavior::kRemoved});
    step.kind = Kind::kSplit;
    step.regex = std::make_shared<const Regex>(kPunctuationPattern);
  } else if (type == "ByteLevel") {
    step.kind = Kind::kByteLevel;
    step.flag = json.value("add_prefix_space", true);
    if (json.value("use_regex", true)) step.regex = std::make_shared<const Regex>(kGpt2Pattern);
  } else if (type == "Metaspace") {
    step.kind = Kind::kMetaspace;
    step.literal = json.value("replacement", std::string("\xE2\x96\x81"));
    step.flag = json.value("split", true);
    step.behavior = Behavior::kMergedWithNext;
    const std::string scheme = json.value(
        "prepend_scheme", std::string(json.value("add_prefix_space", true) ? "always" : "never"));
    if (scheme == "always")
      step.prepend_scheme = PrependScheme::kAlways;
    else if (scheme == "first")
      step.prepend_scheme = PrependScheme::kFirst;
    else if (scheme == "never")
      step.prepend_scheme = PrependScheme::kNever;
    else
      input_error("tokenizer: Metaspace prepend_scheme \"{}\" is unknown", scheme);
  } else if (type == "Digits") {
    step.kind = Kind::kDigits;
    step.flag = json.value("individual_digits", false);
    step.behavior = step.flag ? Behavior::kIsolated : Behavior::kContiguous;
  } else {
    input_error("tokenizer: pre-tokenizer type \"{}\" is not supported", type);
  }
  steps_.push_back(std::move(step));
}

std::vector<PreTokenizer::Span> PreTokenizer::find_spans(const Step& step, std::string_view piece) {
  std::vector<Span> spans;
  size_t prev = 0;
  const auto on_match = [&](size_t start, size_t end) {
    if (prev != start) spans.push_back({prev, start, false});
    spans.push_back({start, end, true});
    prev = end;
  };
  if (step.regex) {
    step.regex->for_each_match(piece, on_match);
  } else if (step.kind == Kind::kSplit) {
    if (!step.literal.empty()) {
      for (size_t hit = piece.find(step.literal); hit != std::string_view::npos;
           hit = piece.find(step.literal, hit + step.literal.size())) {
        on_match(hit, hit + step.literal.size());
      }
    }
  } else {  // per character: Digits (numeric) and Metaspace (the replacement)
    for (size_t pos = 0; pos < piece.size();) {
      const size_t start = pos;
      const char32_t cp = next_code_point(piece, pos);
      const bool hit = step.kind == Kind::kDigits
                           ? is_numeric(cp)
                           : piece.substr(start, pos - start) == step.literal;
      if (hit) on_match(start, pos);
    }
  }
  if (prev != piece.size()) spans.push_back({prev, piece.size(), false});
  if (step.invert) {
    for (Span& span : spans) span.is_match = !span.is_match;
  }
  return spans;
}

// SplitDelimiterBehavior of HF tokenizers, applied to the match/non-match spans.
std::vector<PreTokenizer::Span> PreTokenizer::apply_behavior(std::vector<Span> spans,
                                                             Behavior behavior) {
  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      return spans;
    case Behavior::kRemoved:
      for (const Span& span : spans) {
        if (!span.is_match) out.push_back(span);
      }
      return out;
    case Behavior::kMergedWithPrevious:
      for (const Span& span : spans) {
        if (span.is_match && !previous_match && !out.empty())
          out.back().end = span.end;
        else
          out.push_back(span);
        previous_match = span.is_match;
      }
      return out;
    case Behavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty())
          out.back().start = it->start;
        else
          out.push_back(*it);
        previous_match = it->is_match;
      }
      return {out.rbegin(), out.rend()};
    case Behavior::kContiguous:
      for (const Span& span : spans) {
        if (span.is_match == previous_match && !out.empty())
          out.back().end = span.end;
        else
          out.push_back(span);
        previous_match = span.is_match;
      }
      return out;
  }
  return out;
}

void PreTokenizer::run_split(const Step& step, size_t next, std::string_view piece, bool at_start,
                             WordSink sink) const {
  for (const Span& span : apply_behavior(find_spans(step, piece), step.behavior)) {
    if (span.end > span.start) {
      run(next, piece.substr(span.start, span.end - span.start), at_start && span.start == 0, sink);
    }
  }
}

void PreTokenizer::run_metaspace(const Step& step, size_t next, std::string_view piece,
                                 bool at_start, WordSink sink) const {
  std::string text = replace_all(std::string(piece), " ", step.literal);
  const bool prepend = step.prepend_scheme == PrependScheme::kAlways ||
                       (step.prepend_scheme == PrependScheme::kFirst && at_start);
  if (prepend && text.compare(0, step.literal.size(), step.literal) != 0)
    text.insert(0, step.literal);
  if (step.flag) {
    run_split(step, next, text, at_start, sink);
  } else {
    run(next, text, at_start, sink);
  }
}

void PreTokenizer::run(size_t step_idx, std::string_view piece, bool at_start,
                       WordSink sink) const {
  if (piece.empty()) return;
  if (step_idx == steps_.size()) {
    sink(piece, at_start);
    return;
  }
  const Step& step = steps_[step_idx];
  switch (step.kind) {
    case Kind::kSplit:
    case Kind::kDigits:
      run_split(step, step_idx + 1, piece, at_start, sink);
      return;
    case Kind::kMetaspace:
      run_metaspace(step, step_idx + 1, piece, at_start, sink);
      return;
    case Kind::kByteLevel: {
      std::string prefixed;
      if (step.flag && piece.front() != ' ') {
        prefixed.reserve(piece.size() + 1);
        prefixed.append(1, ' ').append(piece);
        piece = prefixed;
      }
      if (step_idx + 1 < steps_.size()) {
        run_after_byte_level(step, step_idx + 1, piece, at_start, sink);
      } else if (step.regex) {
        run_split(step, step_idx + 1, piece, at_start, sink);
      } else {
        run(step_idx + 1, piece, at_start, sink);
      }
      return;
    }
  }
}

// Steps after a ByteLevel one see words in the GPT-2 byte alphabet (Falcon's Digits split
// treats byte 0xBD, written '½', as a digit); the model gets the raw bytes back.
void PreTokenizer::run_after_byte_level(const Step& step, size_t next, std::string_view piece,
                                        bool at_start, WordSink sink) const {
  const auto to_model = [&](std::string_view word, bool word_at_start) {
    const std::optional<std::string> bytes = byte_level_to_bytes(word);
    HADRON_CHECK(bytes.has_value(), "a byte-level word has a character outside the byte map");
    sink(*bytes, word_at_start);
  };
  const auto mapped = [&](std::string_view word, bool word_at_start) {
    std::string chars;
    for (const char c : word) chars += byte_to_char(static_cast<unsigned char>(c));
    run(next, chars, word_at_start, WordSink(to_model));
  };
  if (step.regex) {
    for (const Span& span : find_spans(step, piece)) {
      mapped(piece.substr(span.start, span.end - span.start), at_start && span.start == 0);
    }
  } else {
    mapped(piece, at_start);
  }
}

}  // namespace hadron::tok
