// The character steps of HF's BertNormalizer (and its Lowercase normalizer),
// with Rust's character classes. "Other" is the general categories Cc, Cf, Co and Cs: HF keeps
// unassigned code points such as U+FDD0 (Cn), as the reference shows.
#include <utf8proc.h>

#include "core/utf8.h"
#include "tokenizer/normalizer.h"

namespace hadron::tok {
namespace {

utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

bool is_other(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}

// The CJK Unified Ideographs blocks BERT pads with spaces (its is_chinese_char).
bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Rewrites valid UTF-8 `text` character by character.
template <typename F>
void map_chars(std::string& text, F&& map) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    map(cp, std::string_view(text).substr(start, pos - start), out);
  }
  text = std::move(out);
}

}  // namespace

void bert_clean_text(std::string& text) {
  map_chars(text, [](char32_t cp, std::string_view ch, std::string& out) {
    const bool control = cp != '\t' && cp != '\n' && cp != '\r' && is_other(cp);
    if (cp == 0 || cp == 0xFFFD || control) return;
    if (is_whitespace(cp))
      out += ' ';
    else
      out += ch;
  });
}

void pad_chinese_chars(std::string& text) {
  map_chars(text, [](char32_t cp, std::string_view ch, std::string& out) {
    if (is_chinese_char(cp))
      out.append(1, ' ').append(ch).append(1, ' ');
    else
      out += ch;
  });
}

void strip_nonspacing_marks(std::string& text) {
  map_chars(text, [](char32_t cp, std::string_view ch, std::string& out) {
    if (category(cp) != UTF8PROC_CATEGORY_MN) out += ch;
  });
}

// Rust's char::to_lowercase: the simple mapping, except U+0130 whose full mapping is two
// characters ("i" and U+0307).
void lowercase(std::string& text) {
  map_chars(text, [](char32_t cp, std::string_view ch, std::string& out) {
    if (cp == 0x130) {
      out += "i\xCC\x87";
      return;
    }
    const auto lower = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
    if (lower == cp)
      out += ch;
    else
      utf8_append(out, lower);
  });
}

}  // namespace hadron::tok
