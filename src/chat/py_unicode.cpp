#include "chat/py_unicode.h"

#include <utf8proc.h>

namespace hadron::chat {

bool py_isspace(char32_t c) {
  if (c <= 0x20) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  switch (c) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
  }
  return c >= 0x2000 && c <= 0x200A;
}

char32_t py_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
}

char32_t py_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}

char32_t py_title_case(char32_t c) {
  if (c < 0x80) return py_upper(c);
  return static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c)));
}

static utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

bool py_isalpha(char32_t c) {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool py_isdigit(char32_t c) { return category(c) == UTF8PROC_CATEGORY_ND; }

bool py_isalnum(char32_t c) {
  auto cat = category(c);
  return py_isalpha(c) || cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL ||
         cat == UTF8PROC_CATEGORY_NO;
}

// Python: printable unless in categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (space excepted).
bool py_isprintable(char32_t c) {
  if (c == ' ') return true;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

}  // namespace hadron::chat
