#include "chat/lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string_view>

#include "chat/py_unicode.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {

namespace {

// The code point at `pos` and its byte length.
char32_t code_point_at(std::string_view s, size_t pos, size_t* length) {
  auto c = static_cast<unsigned char>(s[pos]);
  if (c < 0x80) {
    *length = 1;
    return c;
  }
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  n = std::min(n, s.size() - pos);
  *length = n;
  std::u32string decoded = utf8_decode(s.substr(pos, n));
  return decoded.empty() ? 0xFFFD : decoded[0];
}

// Position after the Python whitespace (regex \s) starting at pos.
size_t skip_space(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    size_t n = 0;
    if (!py_isspace(code_point_at(s, pos, &n))) break;
    pos += n;
  }
  return pos;
}

// Length of s once trailing Python whitespace is removed (str.rstrip()).
size_t rstrip_length(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t n = 0;
    if (!py_isspace(code_point_at(s, start, &n))) break;
    end = start;
  }
  return end;
}

bool all_space(std::string_view s) { return !s.empty() && skip_space(s, 0) == s.size(); }

std::string normalize_newlines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

constexpr std::array<std::string_view, 26> kOperators = {
    "//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
    "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) {
  return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c));
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(const std::string& source) : src_(normalize_newlines(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run();

 private:
  SourcePos pos_of(size_t offset) const;
  [[noreturn]] void fail(size_t offset, const std::string& message) const;
  void push(TokenKind kind, std::string value, size_t offset) {
    tokens_.push_back(Token{kind, std::move(value), pos_of(offset)});
  }
  void emit_text(size_t start, size_t end, char sign, bool is_variable);
  size_t raw_begin_end(size_t tag) const;
  size_t lex_raw(size_t pos);
  size_t lex_comment(size_t pos);
  size_t lex_tag(size_t pos, bool is_block);
  size_t tag_end(size_t pos, bool is_block) const;
  size_t lex_expr_token(size_t pos);
  size_t lex_number(size_t pos);
  size_t float_end(size_t pos) const;
  size_t lex_string(size_t pos);

  std::string src_;
  std::vector<Token> tokens_;
  std::vector<size_t> line_starts_;
  std::vector<char> balance_;
};

SourcePos Lexer::pos_of(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line_idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
  return SourcePos{static_cast<int>(line_idx + 1),
                   static_cast<int>(offset - line_starts_[line_idx] + 1)};
}

void Lexer::fail(size_t offset, const std::string& message) const {
  SourcePos p = pos_of(std::min(offset, src_.size()));
  input_error("template:{}:{}: syntax error: {}", p.line, p.column, message);
}

// Data before a tag, after '-' stripping or lstrip_blocks.
void Lexer::emit_text(size_t start, size_t end, char sign, bool is_variable) {
  std::string_view text(src_.data() + start, end - start);
  if (sign == '-') {
    text = text.substr(0, rstrip_length(text));
  } else if (sign != '+' && !is_variable) {
    size_t nl = text.rfind('\n');
    size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
    bool line_starting = start == 0 || src_[start - 1] == '\n';
    if ((line_start > 0 || line_starting) && all_space(text.substr(line_start)))
      text = text.substr(0, line_start);
  }
  if (!text.empty()) push(TokenKind::text, std::string(text), start);
}

std::vector<Token> Lexer::run() {
  size_t pos = 0;
  while (pos < src_.size()) {
    size_t tag = src_.find('{', pos);
    while (tag != std::string::npos && tag + 1 < src_.size() && src_[tag + 1] != '%' &&
           src_[tag + 1] != '{' && src_[tag + 1] != '#')
      tag = src_.find('{', tag + 1);
    if (tag == std::string::npos || tag + 1 >= src_.size()) {
      push(TokenKind::text, src_.substr(pos), pos);
      break;
    }
    char type = src_[tag + 1];
    char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
    if (sign != '-' && sign != '+') sign = '\0';
    emit_text(pos, tag, sign, type == '{');
    size_t after = tag + 2 + (sign ? 1 : 0);
    if (type == '#') {
      pos = lex_comment(after);
    } else if (type == '%' && raw_begin_end(after) != std::string::npos) {
      pos = lex_raw(raw_begin_end(after));
    } else {
      push(type == '%' ? TokenKind::block_begin : TokenKind::variable_begin, "", tag);
      pos = lex_tag(after, type == '%');
    }
  }
  push(TokenKind::end, "", src_.size());
  return std::move(tokens_);
}

// If `{%` at pos-2 opens `{% raw %}`, the position after its end; npos otherwise.
size_t Lexer::raw_begin_end(size_t pos) const {
  pos = skip_space(src_, pos);
  if (src_.compare(pos, 3, "raw") != 0) return std::string::npos;
  pos = skip_space(src_, pos + 3);
  if (src_.compare(pos, 3, "-%}") == 0) return skip_space(src_, pos + 3);
  if (src_.compare(pos, 2, "%}") == 0) return pos + 2;
  return std::string::npos;
}

size_t Lexer::lex_raw(size_t pos) {
  for (size_t tag = src_.find("{%", pos); tag != std::string::npos;
       tag = src_.find("{%", tag + 1)) {
    size_t p = tag + 2;
    char sign = (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ? src_[p++] : '\0';
    p = skip_space(src_, p);
    if (src_.compare(p, 6, "endraw") != 0) continue;
    p = skip_space(src_, p + 6);
    size_t end = std::string::npos;
    if (src_.compare(p, 3, "+%}") == 0)
      end = p + 3;
    else if (src_.compare(p, 3, "-%}") == 0)
      end = skip_space(src_, p + 3);
    else if (src_.compare(p, 2, "%}") == 0)
      end = p + 2 + (src_.compare(p + 2, 1, "\n") == 0);
    if (end == std::string::npos) continue;
    emit_text(pos, tag, sign, false);
    return end;
  }
  fail(pos, "Missing end of raw directive");
}

size_t Lexer::lex_comment(size_t pos) {
  size_t close = src_.find("#}", pos);
  if (close == std::string::npos) fail(pos, "Missing end of comment tag");
  if (close > pos && src_[close - 1] == '-') return skip_space(src_, close + 2);
  if (close > pos && src_[close - 1] == '+') return close + 2;
  return close + 2 + (close + 2 < src_.size() && src_[close + 2] == '\n');
}

// If a tag end starts at pos (and brackets are balanced), the position after it; else npos.
size_t Lexer::tag_end(size_t pos, bool is_block) const {
  if (!balance_.empty()) return std::string::npos;
  std::string_view close = is_block ? "%}" : "}}";
  if (src_.compare(pos, 1, "-") == 0 && src_.compare(pos + 1, 2, close) == 0)
    return skip_space(src_, pos + 3);
  if (is_block && src_.compare(pos, 1, "+") == 0 && src_.compare(pos + 1, 2, close) == 0)
    return pos + 3;
  if (src_.compare(pos, 2, close) == 0) {
    if (is_block && pos + 2 < src_.size() && src_[pos + 2] == '\n') return pos + 3;
    return pos + 2;
  }
  return std::string::npos;
}

size_t Lexer::lex_tag(size_t pos, bool is_block) {
  balance_.clear();
  while (true) {
    if (pos >= src_.size()) fail(pos, "unexpected end of template");
    size_t end = tag_end(pos, is_block);
    if (end != std::string::npos) {
      push(is_block ? TokenKind::block_end : TokenKind::variable_end, "", pos);
      return end;
    }
    pos = lex_expr_token(pos);
  }
}

size_t Lexer::lex_expr_token(size_t pos) {
  size_t space_end = skip_space(src_, pos);
  if (space_end != pos) return space_end;
  char c = src_[pos];
  if (is_digit(c)) return lex_number(pos);
  if (is_name_start(c)) {
    size_t end = pos;
    while (end < src_.size() && is_name_char(src_[end])) ++end;
    push(TokenKind::name, src_.substr(pos, end - pos), pos);
    return end;
  }
  if (c == '\'' || c == '"') return lex_string(pos);
  for (std::string_view op : kOperators) {
    if (src_.compare(pos, op.size(), op) != 0) continue;
    if (op == "(" || op == "[" || op == "{") {
      balance_.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
    } else if (op == ")" || op == "]" || op == "}") {
      if (balance_.empty()) fail(pos, fmt::format("unexpected '{}'", op));
      if (balance_.back() != op[0])
        fail(pos, fmt::format("unexpected '{}', expected '{}'", op, balance_.back()));
      balance_.pop_back();
    }
    push(TokenKind::op, std::string(op), pos);
    return pos + op.size();
  }
  fail(pos, fmt::format("unexpected char '{}'", c));
}

// jinja's float_re: digits with an optional '_' between them, then a fraction and/or an
// exponent; not right after a '.', so that `x.0.1` is two subscripts.
size_t Lexer::float_end(size_t pos) const {
  auto digits = [&](size_t p) {
    size_t start = p;
    while (p < src_.size() && (is_digit(src_[p]) || (src_[p] == '_' && p > start &&
                                                     p + 1 < src_.size() && is_digit(src_[p + 1]))))
      ++p;
    return p;
  };
  if (pos > 0 && src_[pos - 1] == '.') return std::string::npos;
  size_t end = digits(pos);
  bool is_float = false;
  if (end + 1 < src_.size() && src_[end] == '.' && is_digit(src_[end + 1])) {
    end = digits(end + 1);
    is_float = true;
  }
  if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
    size_t p = end + 1;
    if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
    if (p < src_.size() && is_digit(src_[p])) {
      end = digits(p);
      is_float = true;
    }
  }
  return is_float ? end : std::string::npos;
}

// Floats, then jinja's integer_re: 0b/0o/0x literals, decimals without a leading zero, zero.
size_t Lexer::lex_number(size_t pos) {
  if (size_t end = float_end(pos); end != std::string::npos) {
    std::string text = src_.substr(pos, end - pos);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    push(TokenKind::floating, text, pos);
    return end;
  }
  int base = 10;
  size_t p = pos;
  char prefix = pos + 1 < src_.size() ? static_cast<char>(std::tolower(src_[pos + 1])) : '\0';
  if (src_[pos] == '0' && (prefix == 'b' || prefix == 'o' || prefix == 'x')) {
    base = prefix == 'b' ? 2 : prefix == 'o' ? 8 : 16;
    p += 2;
  }
  auto is_base_digit = [&](char c) {
    int v = std::isdigit(static_cast<unsigned char>(c))   ? c - '0'
            : std::isalpha(static_cast<unsigned char>(c)) ? std::tolower(c) - 'a' + 10
                                                          : 99;
    return v < base;
  };
  uint64_t value = 0;
  size_t n_digits = 0;
  while (p < src_.size() && (is_base_digit(src_[p]) || (src_[p] == '_' && p + 1 < src_.size() &&
                                                        is_base_digit(src_[p + 1])))) {
    if (src_[p] != '_') {
      int digit = std::isdigit(static_cast<unsigned char>(src_[p]))
                      ? src_[p] - '0'
                      : std::tolower(src_[p]) - 'a' + 10;
      if (value > (UINT64_MAX - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(base) ||
          (n_digits > 0 && base == 10 && src_[pos] == '0' && digit != 0))
        break;
      value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
      ++n_digits;
    }
    ++p;
  }
  if (n_digits == 0) {  // "0x" without digits: the integer 0, then a name
    p = pos + 1;
    value = 0;
  }
  if (value > static_cast<uint64_t>(INT64_MAX)) fail(pos, "integer literal too large");
  push(TokenKind::integer, std::to_string(value), pos);
  return p;
}

size_t Lexer::lex_string(size_t pos) {
  char quote = src_[pos];
  size_t p = pos + 1;
  while (p < src_.size() && src_[p] != quote) p += src_[p] == '\\' ? 2 : 1;
  if (p >= src_.size()) fail(pos, "unexpected char '" + std::string(1, quote) + "'");
  push(TokenKind::string,
       unescape_python_string(std::string_view(src_).substr(pos + 1, p - pos - 1)), pos);
  return p + 1;
}

}  // namespace

std::vector<Token> tokenize_template(const std::string& source) { return Lexer(source).run(); }

}  // namespace hadron::chat
