#include "grammar/regex.h"

#include "core/utf8.h"
#include "grammar/char_class.h"
#include "grammar/grammar_error.h"
#include "grammar/text_parser.h"

namespace hadron::grammar {
namespace {

class RegexParser : public TextParser {
 public:
  RegexParser(std::string_view text, const std::string& location, const GrammarLimits& limits,
              RegexOptions options)
      : TextParser(text, location, " of the pattern", limits.max_depth),
        limits_(limits),
        options_(options) {}

  ExprPtr parse() {
    if (peek('^')) ++pos_;
    ExprPtr e = alternation(0);
    if (pos_ < text_.size()) fail("unbalanced ')'");
    return e;
  }

 private:
  ExprPtr sequence(int depth) override {
    std::vector<ExprPtr> items;
    while (pos_ < text_.size() && !peek('|') && !peek(')')) {
      if (peek('$')) {
        ++pos_;
        if (pos_ != text_.size() && !peek(')') && !peek('|')) fail("'$' not at the end");
        continue;
      }
      if (peek('^')) fail("'^' not at the start");
      items.push_back(quantified(atom(depth)));
    }
    return seq(std::move(items));
  }

  ExprPtr quantified(ExprPtr e) {
    while (pos_ < text_.size()) {
      int32_t min = 0, max = -1;
      const char c = text_[pos_];
      if (c == '*') {
        ++pos_;
      } else if (c == '+') {
        min = 1;
        ++pos_;
      } else if (c == '?') {
        max = 1;
        ++pos_;
      } else if (c == '{' && counted(min, max)) {
      } else {
        break;
      }
      if (peek('?'))
        ++pos_;  // lazy: the same strings
      else if (peek('+'))
        fail("possessive quantifiers are not supported");
      e = repeat(std::move(e), min, max);
    }
    return e;
  }

  // {m}, {m,}, {m,n}; false (nothing read) when '{' does not start one (a literal brace).
  bool counted(int32_t& min, int32_t& max) {
    size_t p = pos_ + 1;
    auto number = [&](int32_t& out) {
      const size_t start = p;
      int64_t v = 0;
      while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9') {
        v = std::min<int64_t>(v * 10 + (text_[p] - '0'), int64_t{1} << 40);
        ++p;
      }
      if (v > limits_.max_repeat) {
        pos_ = start;
        fail(fmt::format("a repetition bound over {}", limits_.max_repeat));
      }
      out = static_cast<int32_t>(v);
      return p > start;
    };
    if (!number(min)) return false;
    max = min;
    if (p < text_.size() && text_[p] == ',') {
      ++p;
      if (!number(max)) max = -1;
    }
    if (p >= text_.size() || text_[p] != '}') return false;
    if (max >= 0 && max < min) fail("a repetition {m,n} with n < m");
    pos_ = p + 1;
    return true;
  }

  ExprPtr atom(int depth) {
    const char c = text_[pos_];
    if (c == '(') return group(depth);
    if (c == '[') return char_class();
    if (c == '.') {
      ++pos_;
      return code_points(any_char(), false);
    }
    if (c == '*' || c == '+' || c == '?') fail("a quantifier with nothing to repeat");
    if (c == '\\') return escape();
    char32_t cp = next_code_point(text_, pos_);
    return code_points({{cp, cp}}, false);
  }

  ExprPtr group(int depth) {
    ++pos_;
    if (peek('?')) {
      ++pos_;
      if (peek(':')) {
        ++pos_;
      } else if (peek('<') && pos_ + 1 < text_.size() && text_[pos_ + 1] != '=' &&
                 text_[pos_ + 1] != '!') {
        while (pos_ < text_.size() && text_[pos_] != '>') ++pos_;  // a named group
        ++pos_;
      } else if (peek('P') && pos_ + 1 < text_.size() && text_[pos_ + 1] == '<') {
        while (pos_ < text_.size() && text_[pos_] != '>') ++pos_;
        ++pos_;
      } else {
        fail("lookaround and inline flags are not supported");
      }
    }
    ExprPtr inner = alternation(depth + 1);
    if (!peek(')')) fail("missing ')'");
    ++pos_;
    return inner;
  }

  // Code points '.' matches: all but newline (and JSON's specials inside a JSON string).
  std::vector<CodePointRange> any_char() const {
    if (options_.json_string_chars) return json_string_excluded(true);
    return normalize_ranges({{U'\n', U'\n'}}, true);
  }
  // With `negate`, everything the JSON-string option keeps; otherwise its excluded set.
  std::vector<CodePointRange> json_string_excluded(bool negate) const {
    return normalize_ranges({{0, 0x1F}, {U'"', U'"'}, {U'\\', U'\\'}}, negate);
  }
  std::vector<CodePointRange> negated(std::vector<CodePointRange> ranges) const {
    std::vector<CodePointRange> out = normalize_ranges(std::move(ranges), true);
    if (!options_.json_string_chars) return out;
    for (auto r : json_string_excluded(false)) out.push_back(r);
    return normalize_ranges(normalize_ranges(std::move(out), true), true);
  }

  ExprPtr escape() {
    std::vector<CodePointRange> ranges;
    bool negate = false;
    if (!class_escape(ranges, negate)) fail("an unsupported escape");
    return code_points(negate ? negated(ranges) : ranges, false);
  }

  // Reads one escape (pos_ at the backslash) as a set of code points.
  bool class_escape(std::vector<CodePointRange>& ranges, bool& negate) {
    ++pos_;
    if (pos_ >= text_.size()) fail("a trailing backslash");
    const char c = text_[pos_++];
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 's':
      case 'S':
        ranges = shorthand_class(static_cast<char>(c | 0x20));
        negate = c >= 'A' && c <= 'Z';
        return true;
      case 'b':
      case 'B':
        fail("word boundaries are not supported");
      case 'n':
        ranges = {{U'\n', U'\n'}};
        return true;
      case 'r':
        ranges = {{U'\r', U'\r'}};
        return true;
      case 't':
        ranges = {{U'\t', U'\t'}};
        return true;
      case 'f':
        ranges = {{U'\f', U'\f'}};
        return true;
      case 'v':
        ranges = {{U'\v', U'\v'}};
        return true;
      case '0':
        ranges = {{0, 0}};
        return true;
      case 'x':
      case 'u': {
        const char32_t cp = hex_escape(c);
        ranges = {{cp, cp}};
        return true;
      }
      default:
        if (c >= '1' && c <= '9') fail("backreferences are not supported");
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return false;
        --pos_;
        const char32_t cp = next_code_point(text_, pos_);
        ranges = {{cp, cp}};
        return true;
    }
  }

  char32_t hex_escape(char kind) {
    size_t n = kind == 'x' ? 2 : 4;
    bool braced = peek('{');
    if (braced) ++pos_;
    char32_t cp = 0;
    size_t read = 0;
    while (pos_ < text_.size() && (braced ? text_[pos_] != '}' : read < n)) {
      const int d = hex_digit(text_[pos_]);
      if (d < 0 || read >= 6) fail("a bad hexadecimal escape");
      cp = cp * 16 + static_cast<char32_t>(d);
      ++pos_;
      ++read;
    }
    if (braced) {
      if (!peek('}')) fail("a bad hexadecimal escape");
      ++pos_;
    } else if (read != n) {
      fail("a bad hexadecimal escape");
    }
    if (cp > 0x10FFFF) fail("a code point past U+10FFFF");
    return cp;
  }

  ExprPtr char_class() {
    ++pos_;
    const bool negate = peek('^');
    if (negate) ++pos_;
    std::vector<CodePointRange> ranges;
    bool first = true;
    while (pos_ < text_.size() && (first || !peek(']'))) {
      first = false;
      char32_t lo = 0;
      if (peek('\\')) {
        std::vector<CodePointRange> sub;
        bool sub_negate = false;
        if (!class_escape(sub, sub_negate)) fail("an unsupported escape in a class");
        if (sub_negate) sub = normalize_ranges(std::move(sub), true);
        if (sub.size() != 1 || sub[0].first != sub[0].second || sub_negate) {
          ranges.insert(ranges.end(), sub.begin(), sub.end());
          continue;
        }
        lo = sub[0].first;
      } else if (peek('[') && pos_ + 1 < text_.size() && text_[pos_ + 1] == ':') {
        fail("POSIX classes are not supported");
      } else {
        lo = next_code_point(text_, pos_);
      }
      char32_t hi = lo;
      if (peek('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        if (peek('\\')) {
          std::vector<CodePointRange> sub;
          bool sub_negate = false;
          if (!class_escape(sub, sub_negate) || sub_negate || sub.size() != 1)
            fail("a bad class range");
          hi = sub[0].first;
        } else {
          hi = next_code_point(text_, pos_);
        }
        if (hi < lo) fail("a class range out of order");
      }
      ranges.push_back({lo, hi});
    }
    if (!peek(']')) fail("missing ']'");
    ++pos_;
    if (negate) return code_points(negated(std::move(ranges)), false);
    return code_points(std::move(ranges), false);
  }

  const GrammarLimits& limits_;
  RegexOptions options_;
};

}  // namespace

ExprPtr parse_regex(std::string_view pattern, const std::string& location,
                    const GrammarLimits& limits, RegexOptions options) {
  if (!is_valid_utf8(pattern)) grammar_error(location, "the pattern is not valid UTF-8");
  return RegexParser(pattern, location, limits, options).parse();
}

Grammar compile_regex(std::string_view pattern, const GrammarLimits& limits) {
  GrammarBuilder builder(limits);
  const int32_t root = builder.declare("root");
  builder.define(root, parse_regex(pattern, "regex", limits));
  return builder.build(root);
}

}  // namespace hadron::grammar
