#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/pattern_json.h"

namespace hadron::tok {
namespace {}  // namespace

// A character that NFC leaves alone wherever it stands: a starter (combining class 0) with no
// canonical decomposition that never composes with a preceding character. Below U+0300 all
// characters qualify; Hangul jamo compose algorithmically, so they never do.
bool nfc_inert(char32_t cp) {
  if (cp < 0x300) return true;
  if (cp >= 0x1100 && cp <= 0x11FF) return false;
  const utf8proc_property_t* property = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  if (property->combining_class != 0) return false;
  if (property->decomp_seqindex != UINT16_MAX && property->decomp_type == 0) return false;
  return property->comb_index == UINT16_MAX || property->comb_index < 0x8000;
}

namespace {

// Text made only of NFC-inert characters is already in NFC (its quick check is Yes).
bool nfc_stable(const std::string& text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (!nfc_inert(next_code_point(text, pos))) return false;
  }
  return true;
}

void utf8proc_normalize(std::string& text, utf8proc_option_t options) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &out,
                   static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (n < 0) input_error("tokenizer: normalization failed: {}", utf8proc_errmsg(n));
  text.assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
}

}  // namespace

std::string replace_all(const std::string& text, const std::string& pattern,
                        const std::string& content) {
  if (pattern.empty()) return text;
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(pattern, pos)) != std::string::npos;
       pos = hit + pattern.size()) {
    out.append(text, pos, hit - pos);
    out += content;
  }
  out.append(text, pos);
  return out;
}

std::string replace_all(const std::string& text, const Regex& pattern, const std::string& content) {
  std::string out;
  size_t pos = 0;
  pattern.for_each_match(text, [&](size_t start, size_t end) {
    out.append(text, pos, start - pos);
    out += content;
    pos = end;
  });
  out.append(text, pos);
  return out;
}

Normalizer Normalizer::from_json(const nlohmann::json& json) {
  Normalizer normalizer;
  if (!json.is_null()) normalizer.add_from_json(json);
  return normalizer;
}

void Normalizer::add_from_json(const nlohmann::json& json) {
  const std::string type = json.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const nlohmann::json& child : json.at("normalizers")) add_from_json(child);
  } else if (type == "NFC") {
    steps_.push_back({Kind::kNfc, {}, {}, nullptr});
  } else if (type == "NFKC") {
    steps_.push_back({Kind::kNfkc, {}, {}, nullptr});
  } else if (type == "NFD") {
    steps_.push_back({Kind::kNfd, {}, {}, nullptr});
  } else if (type == "NFKD") {
    steps_.push_back({Kind::kNfkd, {}, {}, nullptr});
  } else if (type == "Prepend") {
    steps_.push_back({Kind::kPrepend, json.at("prepend").get<std::string>(), {}, nullptr});
  } else if (type == "Replace") {
    Pattern pattern = pattern_from_json(json.at("pattern"));
    steps_.push_back({Kind::kReplace, std::move(pattern.literal),
                      json.at("content").get<std::string>(), std::move(pattern.regex)});
  } else if (type == "BertNormalizer") {
    const auto bert_step = [&](void (*fn)(std::string&)) {
      steps_.push_back({Kind::kBertStep, {}, {}, nullptr, fn});
    };
    const bool lowercase = json.value("lowercase", true);
    const nlohmann::json& strip_accents = json.value("strip_accents", nlohmann::json());
    if (json.value("clean_text", true)) bert_step(bert_clean_text);
    if (json.value("handle_chinese_chars", true)) bert_step(pad_chinese_chars);
    if (strip_accents.is_null() ? lowercase : strip_accents.get<bool>()) {
      steps_.push_back({Kind::kNfd, {}, {}, nullptr});
      bert_step(strip_nonspacing_marks);
    }
    if (lowercase) bert_step(tok::lowercase);
  } else if (type == "Lowercase") {
    steps_.push_back({Kind::kBertStep, {}, {}, nullptr, lowercase});
  } else {
    input_error("tokenizer: normalizer type \"{}\" is not supported", type);
  }
}

void Normalizer::apply(const Step& step, std::string& text) {
  switch (step.kind) {
    case Kind::kNfc:
      if (!nfc_stable(text)) utf8proc_normalize(text, UTF8PROC_COMPOSE);
      return;
    case Kind::kNfkc:
      utf8proc_normalize(text, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
      return;
    case Kind::kNfd:
      utf8proc_normalize(text, UTF8PROC_DECOMPOSE);
      return;
    case Kind::kNfkd:
      utf8proc_normalize(text,
                         static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT));
      return;
    case Kind::kPrepend:
      if (!text.empty()) text.insert(0, step.text);
      return;
    case Kind::kReplace:
      text = step.regex ? replace_all(text, *step.regex, step.content)
                        : replace_all(text, step.text, step.content);
      return;
    case Kind::kBertStep:
      step.bert_step(text);
      return;
  }
}

void Normalizer::normalize(std::string& text) const {
  for (const Step& step : steps_) apply(step, text);
}

}  // namespace hadron::tok
