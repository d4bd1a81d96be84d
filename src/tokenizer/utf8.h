// UTF-8 helpers shared by the tokenizer stages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hadron::tok {

// Length of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
inline size_t utf8_len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// Decodes the code point at text[pos] (valid UTF-8 assumed) and advances pos.
char32_t next_code_point(std::string_view text, size_t& pos);

void append_utf8(std::string& out, char32_t cp);

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// Replaces each maximal ill-formed subpart with U+FFFD, as WHATWG's TextDecoder, Node's
// Buffer.toString and Rust's String::from_utf8_lossy do.
std::string utf8_lossy(std::string_view bytes);

// Rust's char::is_whitespace (the Unicode White_Space property).
bool is_whitespace(char32_t cp);

}  // namespace hadron::tok
