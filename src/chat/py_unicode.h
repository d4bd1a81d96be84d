// Python's str semantics for one code point (case, whitespace, character classes); strings are
// decoded with core/utf8.h, so len and slicing count code points as Python does.
#pragma once

namespace hadron::chat {

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
