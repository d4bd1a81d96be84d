#include "chat/lexer.h"
#include "core/utf8.h"

namespace hadron::chat {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `n` hex digits at body[i]; returns false when they are not all hex.
bool read_hex(std::string_view body, size_t i, size_t n, char32_t* out) {
  if (i + n > body.size()) return false;
  char32_t v = 0;
  for (size_t k = 0; k < n; ++k) {
    int h = hex_value(body[i + k]);
    if (h < 0) return false;
    v = v * 16 + static_cast<char32_t>(h);
  }
  *out = v;
  return true;
}

char simple_escape(char c) {
  switch (c) {
    case '\\':
      return '\\';
    case '\'':
      return '\'';
    case '"':
      return '"';
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      return 0;
  }
}

}  // namespace

std::string unescape_python_string(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out += body[i++];
      continue;
    }
    char e = body[i + 1];
    char32_t cp = 0;
    if (char s = simple_escape(e)) {
      out += s;
      i += 2;
    } else if (e == '\n') {
      i += 2;
    } else if (e >= '0' && e <= '7') {
      size_t j = i + 1;
      while (j < body.size() && j < i + 4 && body[j] >= '0' && body[j] <= '7') {
        cp = cp * 8 + static_cast<char32_t>(body[j] - '0');
        ++j;
      }
      utf8_append(out, cp);
      i = j;
    } else if ((e == 'x' && read_hex(body, i + 2, 2, &cp)) ||
               (e == 'u' && read_hex(body, i + 2, 4, &cp)) ||
               (e == 'U' && read_hex(body, i + 2, 8, &cp) && cp <= 0x10FFFF)) {
      utf8_append(out, cp);
      i += 2 + (e == 'x' ? 2 : e == 'u' ? 4 : 8);
    } else {
      out += '\\';
      ++i;
    }
  }
  return out;
}

}  // namespace hadron::chat
