#include "grammar/gbnf.h"

#include <gtest/gtest.h>

#include "grammar/grammar_error.h"
#include "test_util.h"

namespace hadron::grammar {
namespace {

// A llama.cpp-style arithmetic grammar: recursion, left recursion through a repetition,
// comments, classes, escapes and rules spanning lines.
constexpr const char* kArithmetic = R"gbnf(
# expressions
root  ::= expr "\n"?
expr  ::= term (("+" | "-") term)*
term  ::= factor ([*/] factor)*
factor ::= number | "(" ws expr ws ")"
number ::= [0-9]+ ("." [0-9]{1,3})?
ws    ::= [ \t]*
)gbnf";

TEST(Gbnf, ArithmeticGrammar) {
  auto g = share(compile_gbnf(kArithmetic));
  EXPECT_TRUE(matches(g, "1+2*3"));
  EXPECT_TRUE(matches(g, "(1.5+2)*( 3-4 )/5\n"));
  EXPECT_TRUE(matches(g, "((((7))))"));
  EXPECT_FALSE(matches(g, "1+"));
  EXPECT_FALSE(matches(g, "(1+2"));
  EXPECT_FALSE(matches(g, "1.2345"));
  EXPECT_FALSE(matches(g, "1 + 2"));
}

TEST(Gbnf, LeftRecursionAndUnicode) {
  auto g =
      share(compile_gbnf("root ::= list\nlist ::= list \",\" item | item\n"
                         "item ::= [α-ω] | \"\\u00e9\" | [^\\x00-\\x7F,]"));
  EXPECT_TRUE(matches(g, "α,é,ω,漢"));
  EXPECT_FALSE(matches(g, "α,,ω"));
  EXPECT_FALSE(matches(g, "a"));
}

TEST(Gbnf, ErrorsNameTheProblem) {
  auto message = [](const char* text) {
    try {
      compile_gbnf(text);
    } catch (const GrammarError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("root ::= foo").find("'foo' is used but not defined"), std::string::npos);
  EXPECT_NE(message("start ::= \"a\"").find("no 'root'"), std::string::npos);
  EXPECT_NE(message("root ::= \"a").find("unterminated"), std::string::npos);
  EXPECT_NE(message("root ::= [b-a]").find("out of order"), std::string::npos);
  EXPECT_NE(message("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  // Only infinite recursion: no string at all.
  EXPECT_NE(message("root ::= \"a\" root").find("unsatisfiable"), std::string::npos);
}

}  // namespace
}  // namespace hadron::grammar
