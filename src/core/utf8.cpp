#include "core/utf8.h"

namespace hadron {
namespace {

// Length of the well-formed sequence at bytes[pos], or 0 with `subpart` set to the length of
// the maximal ill-formed subpart (Unicode 3.9, table 3-7).
size_t valid_sequence_len(std::string_view bytes, size_t pos, size_t& subpart) {
  const auto at = [&](size_t i) { return static_cast<unsigned char>(bytes[pos + i]); };
  const unsigned char lead = at(0);
  subpart = 1;
  if (lead < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t i = 1; i < n; ++i) {
    if (pos + i >= bytes.size()) return 0;
    const unsigned char c = at(i);
    const bool ok = i == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return 0;
    subpart = i + 1;
  }
  return n;
}

}  // namespace

char32_t next_code_point(std::string_view text, size_t& pos) {
  const auto c0 = static_cast<unsigned char>(text[pos]);
  const size_t n = utf8_len(c0);
  if (n == 1 || pos + n > text.size()) {
    ++pos;
    return c0;
  }
  char32_t cp = c0 & (0x7F >> n);
  for (size_t i = 1; i < n; ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  pos += n;
  return cp;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF) cp = 0xFFFD;  // no UTF-8 form
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::u32string utf8_decode(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t pos = 0, subpart = 0;
  while (pos < text.size()) {
    if (valid_sequence_len(text, pos, subpart) == 0) {
      out.push_back(0xFFFD);
      pos += subpart;
    } else {
      out.push_back(next_code_point(text, pos));
    }
  }
  return out;
}

std::string utf8_encode(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t cp : code_points) utf8_append(out, cp);
  return out;
}

size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_valid_utf8(std::string_view text) {
  size_t pos = 0, subpart = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const size_t n = valid_sequence_len(text, pos, subpart);
    if (n == 0) return false;
    pos += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0, subpart = 0;
  while (pos < bytes.size()) {
    const size_t n = valid_sequence_len(bytes, pos, subpart);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      pos += subpart;
    } else {
      out.append(bytes.data() + pos, n);
      pos += n;
    }
  }
  return out;
}

bool is_whitespace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

}  // namespace hadron
