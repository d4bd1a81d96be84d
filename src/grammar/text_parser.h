// What the regex and GBNF parsers share: a cursor over the text, errors that give the
// offset, and '|'-separated alternatives of what the parser's sequence() reads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grammar/expr.h"
#include "grammar/grammar_error.h"

namespace hadron::grammar {

class TextParser {
 public:
  virtual ~TextParser() = default;

 protected:
  // Errors read "<location>: <what> at offset N<of_what>".
  TextParser(std::string_view text, std::string location, std::string of_what, int max_depth)
      : text_(text),
        location_(std::move(location)),
        of_what_(std::move(of_what)),
        max_depth_(max_depth) {}

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  [[noreturn]] void fail(std::string_view what) const {
    grammar_error(location_, "{} at offset {}{}", what, pos_, of_what_);
  }

  ExprPtr alternation(int depth) {
    if (depth > max_depth_) fail("groups nested too deep");
    std::vector<ExprPtr> branches = {sequence(depth)};
    while (peek('|')) {
      ++pos_;
      branches.push_back(sequence(depth));
    }
    return alt(std::move(branches));
  }
  virtual ExprPtr sequence(int depth) = 0;

  std::string_view text_;
  size_t pos_ = 0;

 private:
  std::string location_;
  std::string of_what_;
  int max_depth_;
};

}  // namespace hadron::grammar
