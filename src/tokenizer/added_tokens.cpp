#include "tokenizer/added_tokens.h"

#include <utf8proc.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/utf8.h"
#include "tokenizer/json_number.h"

namespace hadron::tok {
namespace {

// HF's is_word_character: alphanumeric or '_'.
bool is_word_char(char32_t cp) {
  if (cp == '_') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

size_t char_start_before(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return start;
}

bool ends_with_word(std::string_view text) {
  if (text.empty()) return false;
  size_t pos = char_start_before(text, text.size());
  return is_word_char(next_code_point(text, pos));
}

bool starts_with_word(std::string_view text) {
  size_t pos = 0;
  return !text.empty() && is_word_char(next_code_point(text, pos));
}

// Start of the whitespace run that ends `text`.
size_t trailing_space_start(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = char_start_before(text, end), pos = start;
    if (!is_whitespace(next_code_point(text, pos))) break;
    end = start;
  }
  return end;
}

// Length of the whitespace run that starts `text`.
size_t leading_space_len(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!is_whitespace(next_code_point(text, next))) break;
    pos = next;
  }
  return pos;
}

}  // namespace

std::vector<AddedToken> added_tokens_from_json(const nlohmann::json& tokens) {
  std::vector<AddedToken> out;
  for (const nlohmann::json& token : tokens) {
    out.push_back({token.at("content").get<std::string>(),
                   token.contains("id") ? json_token_id(token["id"]) : 0,
                   token.value("special", false), token.value("lstrip", false),
                   token.value("rstrip", false),
                   token.value("normalized", !token.value("special", false)),
                   token.value("single_word", false)});
  }
  return out;
}

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens,
                                     const std::vector<std::string>& patterns)
    : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string& pattern = patterns[i];
    if (pattern.empty()) continue;
    first_byte_[static_cast<unsigned char>(pattern[0])] = true;
    int32_t node = 0;
    for (const char c : pattern) {
      const auto byte = static_cast<unsigned char>(c);
      auto& children = nodes_[node].children;
      const auto it = std::find_if(children.begin(), children.end(),
                                   [&](const auto& child) { return child.first == byte; });
      if (it != children.end()) {
        node = it->second;
        continue;
      }
      children.emplace_back(byte, static_cast<int32_t>(nodes_.size()));
      node = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    if (nodes_[node].token_idx < 0) nodes_[node].token_idx = static_cast<int32_t>(i);
  }
}

size_t AddedTokenMatcher::longest_match(std::string_view text, size_t pos,
                                        int32_t& token_idx) const {
  size_t best = 0;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto& children = nodes_[node].children;
    const auto it = std::find_if(children.begin(), children.end(),
                                 [&](const auto& child) { return child.first == byte; });
    if (it == children.end()) break;
    node = it->second;
    if (nodes_[node].token_idx >= 0) {
      best = i + 1 - pos;
      token_idx = nodes_[node].token_idx;
    }
  }
  return best;
}

// AddedVocabulary::find_matches of HF tokenizers.
void AddedTokenMatcher::split(std::string_view text, TextSink on_text, TokenSink on_token) const {
  size_t start_offset = 0;
  for (size_t pos = 0; pos < text.size();) {
    int32_t token_idx = -1;
    const size_t length = first_byte_[static_cast<unsigned char>(text[pos])]
                              ? longest_match(text, pos, token_idx)
                              : 0;
    if (length == 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[token_idx];
    size_t start = pos, stop = pos + length;
    pos = stop;
    if (token.single_word && ((start > 0 && ends_with_word(text.substr(0, start))) ||
                              (stop < text.size() && starts_with_word(text.substr(stop))))) {
      continue;
    }
    if (token.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
    if (token.rstrip) stop += leading_space_len(text.substr(stop));
    if (start_offset < start)
      on_text(text.substr(start_offset, start - start_offset), start_offset);
    on_token(token.id);
    start_offset = stop;
  }
  if (start_offset < text.size()) on_text(text.substr(start_offset), start_offset);
}

}  // namespace hadron::tok
