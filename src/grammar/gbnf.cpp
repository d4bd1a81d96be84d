#include "grammar/gbnf.h"

#include <map>

#include "core/utf8.h"
#include "grammar/char_class.h"
#include "grammar/grammar_error.h"
#include "grammar/text_parser.h"

namespace hadron::grammar {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

class GbnfParser : public TextParser {
 public:
  GbnfParser(std::string_view text, GrammarBuilder& builder)
      : TextParser(text, "grammar", "", builder.limits().max_depth), builder_(builder) {}

  Grammar parse() {
    skip_space();
    while (pos_ < text_.size()) {
      const std::string name = read_name();
      skip_space();
      if (text_.substr(pos_, 3) != "::=") fail("expected '::='");
      pos_ += 3;
      const int32_t rule = rule_id(name);
      if (builder_.defined(rule)) fail(fmt::format("rule '{}' is defined twice", name));
      builder_.define(rule, alternation(0));
      skip_space();
    }
    const auto root = rules_.find("root");
    if (root == rules_.end()) grammar_error("grammar", "the grammar has no 'root' rule");
    for (const auto& [name, id] : rules_)
      if (!builder_.defined(id))
        grammar_error("grammar", "rule '{}' is used but not defined", name);
    return builder_.build(root->second);
  }

 private:
  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string read_name() {
    const size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    if (pos_ == start) fail("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  int32_t rule_id(const std::string& name) {
    auto [it, added] = rules_.emplace(name, 0);
    if (added) it->second = builder_.declare(name);
    return it->second;
  }

  // True when the text at pos_ starts the next rule ("name ::=").
  bool at_rule_start() const {
    size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() &&
           (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\n' || text_[p] == '\r'))
      ++p;
    return text_.substr(p, 3) == "::=";
  }

  ExprPtr sequence(int depth) override {
    std::vector<ExprPtr> items;
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || peek('|') || peek(')') || at_rule_start()) break;
      items.push_back(quantified(atom(depth)));
    }
    return seq(std::move(items));
  }

  ExprPtr atom(int depth) {
    const char c = text_[pos_];
    if (c == '"') return string_literal();
    if (c == '[') return char_class();
    if (c == '.') {
      ++pos_;
      return code_points({}, true);
    }
    if (c == '(') {
      ++pos_;
      ExprPtr inner = alternation(depth + 1);
      skip_space();
      if (!peek(')')) fail("missing ')'");
      ++pos_;
      return inner;
    }
    if (is_name_char(c)) return ref(rule_id(read_name()));
    fail(fmt::format("unexpected '{}'", c));
  }

  ExprPtr quantified(ExprPtr e) {
    for (;;) {
      if (peek('*')) {
        e = repeat(std::move(e), 0, -1);
      } else if (peek('+')) {
        e = repeat(std::move(e), 1, -1);
      } else if (peek('?')) {
        e = repeat(std::move(e), 0, 1);
      } else if (peek('{')) {
        ++pos_;
        const int32_t min = peek(',') ? 0 : number();
        int32_t max = min;
        if (peek(',')) {
          ++pos_;
          max = peek('}') ? -1 : number();
        }
        if (!peek('}')) fail("expected '}'");
        if (max >= 0 && max < min) fail("a repetition {m,n} with n < m");
        e = repeat(std::move(e), min, max);
      } else {
        return e;
      }
      ++pos_;
    }
  }

  int32_t number() {
    int64_t v = 0;
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      v = v * 10 + (text_[pos_++] - '0');
      if (v > builder_.limits().max_repeat)
        fail(fmt::format("a repetition bound over {}", builder_.limits().max_repeat));
    }
    if (pos_ == start) fail("expected a number");
    return static_cast<int32_t>(v);
  }

  // One character of a string or class, escapes decoded.
  char32_t character() {
    if (pos_ >= text_.size()) fail("unexpected end");
    if (text_[pos_] != '\\') return next_code_point(text_, pos_);
    ++pos_;
    if (pos_ >= text_.size()) fail("a trailing backslash");
    const char c = text_[pos_++];
    switch (c) {
      case 'n':
        return U'\n';
      case 'r':
        return U'\r';
      case 't':
        return U'\t';
      case 'x':
        return hex(2);
      case 'u':
        return hex(4);
      case 'U':
        return hex(8);
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
      case '^':
        return static_cast<char32_t>(c);
      default:
        fail(fmt::format("an unknown escape '\\{}'", c));
    }
  }

  char32_t hex(int n) {
    char32_t cp = 0;
    for (int i = 0; i < n; ++i) {
      const int d = pos_ < text_.size() ? hex_digit(text_[pos_]) : -1;
      if (d < 0) fail("a bad hexadecimal escape");
      cp = cp * 16 + static_cast<char32_t>(d);
      ++pos_;
    }
    if (cp > 0x10FFFF) fail("a code point past U+10FFFF");
    return cp;
  }

  ExprPtr string_literal() {
    ++pos_;
    std::string bytes;
    while (!peek('"')) {
      if (pos_ >= text_.size()) fail("an unterminated string");
      utf8_append(bytes, character());
    }
    ++pos_;
    return literal(bytes);
  }

  ExprPtr char_class() {
    ++pos_;
    const bool negate = peek('^');
    if (negate) ++pos_;
    std::vector<CodePointRange> ranges;
    while (!peek(']')) {
      if (pos_ >= text_.size()) fail("an unterminated class");
      const char32_t lo = character();
      char32_t hi = lo;
      if (peek('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        hi = character();
        if (hi < lo) fail("a class range out of order");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    return code_points(std::move(ranges), negate);
  }

  GrammarBuilder& builder_;
  std::map<std::string, int32_t> rules_;
};

}  // namespace

Grammar compile_gbnf(std::string_view text, const GrammarLimits& limits) {
  if (!is_valid_utf8(text)) grammar_error("grammar", "the grammar is not valid UTF-8");
  GrammarBuilder builder(limits);
  return GbnfParser(text, builder).parse();
}

}  // namespace hadron::grammar
