// Recursive-descent parser following jinja2's grammar (parser.py): statements in parser.cpp,
// expressions in parser_expr.cpp.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace hadron::chat {

// Throws InputError with line and column on a syntax error or an unknown filter/test outside
// an `if` (jinja2 defers those inside `if` and conditional expressions to render time).
Body parse_template(const std::string& source);

// jinja2 rejects an unknown filter or test when compiling, unless it sits in an `if` statement
// or a conditional expression (a "soft frame"): there it fails only when evaluated.
void check_filters_and_tests(const Body& body);

class Parser;

// Bounds parser recursion so that hostile templates cannot overflow the stack.
struct DepthGuard {
  explicit DepthGuard(Parser& p);
  ~DepthGuard();
  Parser& parser;
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  Body parse();

 private:
  friend struct DepthGuard;
  // Statements (parser.cpp).
  Body parse_body(std::initializer_list<std::string_view> end_names);
  StmtPtr parse_statement();
  StmtPtr parse_if();
  StmtPtr parse_for();
  StmtPtr parse_set();
  StmtPtr parse_macro();
  StmtPtr parse_call_block();
  StmtPtr parse_filter_block();
  StmtPtr parse_with();
  Body parse_block_body(std::string_view end_name);
  void parse_params(std::vector<Param>& params);
  std::vector<std::string> parse_target_names();

  // Expressions (parser_expr.cpp).
  ExprPtr parse_tuple(bool with_condexpr = true, bool explicit_parens = false,
                      std::string_view extra_end = "");
  ExprPtr parse_expression(bool with_condexpr = true);
  ExprPtr parse_condexpr();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter = true);
  ExprPtr parse_primary();
  ExprPtr parse_list();
  ExprPtr parse_dict();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_subscribed();
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_filter(ExprPtr node);
  ExprPtr parse_test(ExprPtr node);
  void parse_call_args(Expr& call);

  // Token stream.
  const Token& current() const { return tokens_[idx_]; }
  const Token& peek(size_t ahead = 1) const;
  bool at_op(std::string_view op) const;
  bool at_name(std::string_view name) const;
  bool skip_op(std::string_view op);
  bool skip_name(std::string_view name);
  const Token& next();
  const Token& expect(TokenKind kind, std::string_view what);
  void expect_op(std::string_view op);
  void expect_name(std::string_view name);
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_at(SourcePos pos, const std::string& message) const;
  ExprPtr make(ExprKind kind, SourcePos pos);

  std::vector<Token> tokens_;
  size_t idx_ = 0;
  int depth_ = 0;
};

}  // namespace hadron::chat
