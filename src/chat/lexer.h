// Splits template source into text and tag tokens exactly as jinja2's lexer does with
// trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hadron::chat {

enum class TokenKind {
  text,            // template data, whitespace control already applied
  variable_begin,  // {{
  variable_end,    // }}
  block_begin,     // {%
  block_end,       // %}
  name,
  string,  // value holds the unescaped string
  integer,
  floating,
  op,   // value holds the operator: "+", "//", "==", "(", ...
  end,  // end of template
};

struct SourcePos {
  int line = 1;
  int column = 1;
};

struct Token {
  TokenKind kind;
  std::string value;
  SourcePos pos;
};

// Python's escapes in a string literal's body (\n, \xNN, \uNNNN, octal; unknown ones kept).
std::string unescape_python_string(std::string_view body);

// Throws InputError ("template:LINE:COL: ...") on malformed tags.
std::vector<Token> tokenize_template(const std::string& source);

}  // namespace hadron::chat
