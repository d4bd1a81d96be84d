#include "tokenizer/pre_tokenizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pattern_json.h"
#include "tokenizer/utf8.h"

namespace hadron::tok {
namespace {

// The GPT-2 split of a ByteLevel pre-tokenizer with use_regex.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Rust's char::is_numeric: general categories Nd, Nl and No.
bool is_numeric(char32_t cp) {
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL ||
         category == UTF8PROC_CATEGORY_NO;
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& json) {
  PreTokenizer pre_tokenizer;
  if (!json.is_null()) pre_tokenizer.add_from_json(json);
  for (size_t i = 0; i + 1 < pre_tokenizer.steps_.size(); ++i) {
    if (pre_tokenizer.steps_[i].kind == Kind::kByteLevel) {
      input_error("tokenizer: a ByteLevel pre-tokenizer must come last in the sequence");
    }
  }
  pre_tokenizer.byte_level_ =
      !pre_tokenizer.steps_.empty() && pre_tokenizer.steps_.back().kind == Kind::kByteLevel;
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
    static const std::vector<std::pair<std::string, Behavior>> kBehaviors = {
        {"Removed", Behavior::kRemoved},
        {"Isolated", Behavior::kIsolated},
        {"MergedWithPrevious", Behavior::kMergedWithPrevious},
        {"MergedWithNext", Behavior::kMergedWithNext},
        {"Contiguous", Behavior::kContiguous}};
    Pattern pattern = pattern_from_json(json.at("pattern"));
    step = {Kind::kSplit, std::move(pattern.regex), std::move(pattern.literal)};
    const std::string behavior = json.at("behavior").get<std::string>();
    const auto it = std::find_if(kBehaviors.begin(), kBehaviors.end(),
                                 [&](const auto& entry) { return entry.first == behavior; });
    if (it == kBehaviors.end()) input_error("tokenizer: Split behavior \"{}\" is unknown", behavior);
    step.behavior = it->second;
    step.invert = json.value("invert", false);
  } else if (type == "ByteLevel") {
    step.kind = Kind::kByteLevel;
    step.flag = json.value("add_prefix_space", true);
    if (json.value("use_regex", true)) step.regex = std::make_shared<const Regex>(kGpt2Pattern);
  } else if (type == "Metaspace") {
    step.kind = Kind::kMetaspace;
    step.literal = json.value("replacement", std::string("\xE2\x96\x81"));
    step.flag = json.value("split", true);
    step.behavior = Behavior::kMergedWithNext;
    const std::string scheme = json.value("prepend_scheme", std::string(
        json.value("add_prefix_space", true) ? "always" : "never"));
    if (scheme == "always") step.prepend_scheme = PrependScheme::kAlways;
    else if (scheme == "first") step.prepend_scheme = PrependScheme::kFirst;
    else if (scheme == "never") step.prepend_scheme = PrependScheme::kNever;
    else input_error("tokenizer: Metaspace prepend_scheme \"{}\" is unknown", scheme);
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
      const bool hit = step.kind == Kind::kDigits ? is_numeric(cp)
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
        if (span.is_match && !previous_match && !out.empty()) out.back().end = span.end;
        else out.push_back(span);
        previous_match = span.is_match;
      }
      return out;
    case Behavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) out.back().start = it->start;
        else out.push_back(*it);
        previous_match = it->is_match;
      }
      return {out.rbegin(), out.rend()};
    case Behavior::kContiguous:
      for (const Span& span : spans) {
        if (span.is_match == previous_match && !out.empty()) out.back().end = span.end;
        else out.push_back(span);
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
  if (prepend && text.compare(0, step.literal.size(), step.literal) != 0) text.insert(0, step.literal);
  if (step.flag) {
    run_split(step, next, text, at_start, sink);
  } else {
    run(next, text, at_start, sink);
  }
}

void PreTokenizer::run(size_t step_idx, std::string_view piece, bool at_start, WordSink sink) const {
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
        prefixed = " " + std::string(piece);
        piece = prefixed;
      }
      if (step.regex) run_split(step, step_idx + 1, piece, at_start, sink);
      else run(step_idx + 1, piece, at_start, sink);
      return;
    }
  }
}

}  // namespace hadron::tok
