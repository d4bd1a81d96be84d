// UTF-8 encoding and decoding, shared by the tokenizer, the chat templates and the loader.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hadron {

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

void utf8_append(std::string& out, char32_t cp);

// Code points of `text`; each maximal ill-formed subpart becomes U+FFFD (as utf8_lossy).
std::u32string utf8_decode(std::string_view text);
std::string utf8_encode(std::u32string_view code_points);

// Code points in valid UTF-8 `text` (bytes that are not continuation bytes).
size_t utf8_length(std::string_view text);

// True when `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF), as Rust's str::from_utf8 requires.
bool is_valid_utf8(std::string_view bytes);

// Replaces each maximal ill-formed subpart with U+FFFD, as WHATWG's TextDecoder, Node's
// Buffer.toString and Rust's String::from_utf8_lossy do.
std::string utf8_lossy(std::string_view bytes);

// The Unicode White_Space property (Rust's char::is_whitespace).
bool is_whitespace(char32_t cp);

}  // namespace hadron
