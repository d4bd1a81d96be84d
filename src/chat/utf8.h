// UTF-8 helpers for Python's code-point string semantics (len, slicing, case, whitespace).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hadron::chat {

// Decodes UTF-8 into code points; an invalid byte becomes U+FFFD (input is JSON text, so valid).
std::u32string utf8_decode(std::string_view s);
std::string utf8_encode(std::u32string_view s);
void utf8_append(std::string& out, char32_t c);
size_t utf8_length(std::string_view s);
// Python's str.isspace() for one code point.
bool py_isspace(char32_t c);
char32_t py_upper(char32_t c);
char32_t py_lower(char32_t c);
// Title case: U+01C6 (dz digraph) becomes U+01C5, where upper case would give U+01C4.
char32_t py_title_case(char32_t c);
bool py_isalpha(char32_t c);
bool py_isdigit(char32_t c);
bool py_isalnum(char32_t c);
bool py_isprintable(char32_t c);

}  // namespace hadron::chat
