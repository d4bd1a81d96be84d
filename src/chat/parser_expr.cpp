// Expressions, with jinja2's precedence: conditional < or < and < not < comparisons < + - <
// ~ < * / // % < ** < unary - + < postfix (. [] ()) and filters/tests.
#include <cstdlib>

#include "chat/builtins.h"
#include "chat/parser.h"
#include "core/error.h"

namespace hadron::chat {

const Token& Parser::peek(size_t ahead) const {
  return tokens_[std::min(idx_ + ahead, tokens_.size() - 1)];
}
bool Parser::at_op(std::string_view op) const {
  return current().kind == TokenKind::op && current().value == op;
}
bool Parser::at_name(std::string_view name) const {
  return current().kind == TokenKind::name && current().value == name;
}
bool Parser::skip_op(std::string_view op) {
  if (!at_op(op)) return false;
  next();
  return true;
}
bool Parser::skip_name(std::string_view name) {
  if (!at_name(name)) return false;
  next();
  return true;
}
const Token& Parser::next() {
  const Token& tok = tokens_[idx_];
  if (idx_ + 1 < tokens_.size()) ++idx_;
  return tok;
}
const Token& Parser::expect(TokenKind kind, std::string_view what) {
  if (current().kind != kind) fail(fmt::format("expected {}", what));
  return next();
}
void Parser::expect_op(std::string_view op) {
  if (!skip_op(op)) fail(fmt::format("expected '{}'", op));
}
void Parser::expect_name(std::string_view name) {
  if (!skip_name(name)) fail(fmt::format("expected '{}'", name));
}
void Parser::fail(const std::string& message) const { fail_at(current().pos, message); }
void Parser::fail_at(SourcePos pos, const std::string& message) const {
  input_error("template:{}:{}: syntax error: {}", pos.line, pos.column, message);
}
ExprPtr Parser::make(ExprKind kind, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  return e;
}

ExprPtr Parser::parse_tuple(bool with_condexpr, bool explicit_parens, std::string_view extra_end) {
  SourcePos pos = current().pos;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    TokenKind k = current().kind;
    if (k == TokenKind::variable_end || k == TokenKind::block_end || at_op(")") ||
        (!extra_end.empty() && at_name(extra_end)))
      break;
    items.push_back(parse_expression(with_condexpr));
    if (!at_op(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) fail("expected an expression");
  }
  auto tuple = make(ExprKind::tuple, pos);
  tuple->args = std::move(items);
  return tuple;
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
  DepthGuard guard(*this);
  return with_condexpr ? parse_condexpr() : parse_or();
}

ExprPtr Parser::parse_condexpr() {
  ExprPtr expr = parse_or();
  while (at_name("if")) {
    auto cond = make(ExprKind::conditional, current().pos);
    next();
    cond->args.push_back(std::move(expr));
    cond->args.push_back(parse_or());
    cond->args.push_back(skip_name("else") ? parse_condexpr() : nullptr);
    expr = std::move(cond);
  }
  return expr;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  while (at_name("or")) {
    auto node = make(ExprKind::logical_or, next().pos);
    node->args.push_back(std::move(left));
    node->args.push_back(parse_and());
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (at_name("and")) {
    auto node = make(ExprKind::logical_and, next().pos);
    node->args.push_back(std::move(left));
    node->args.push_back(parse_not());
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (!at_name("not")) return parse_compare();
  DepthGuard guard(*this);
  auto node = make(ExprKind::logical_not, next().pos);
  node->args.push_back(parse_not());
  return node;
}

ExprPtr Parser::parse_compare() {
  SourcePos pos = current().pos;
  ExprPtr first = parse_math1();
  auto node = make(ExprKind::compare, pos);
  while (true) {
    static const std::pair<std::string_view, CompareOp> kOps[] = {
        {"==", CompareOp::eq}, {"!=", CompareOp::ne}, {"<", CompareOp::lt},
        {"<=", CompareOp::le}, {">", CompareOp::gt},  {">=", CompareOp::ge}};
    bool found = false;
    for (const auto& [text, op] : kOps) {
      if (skip_op(text)) {
        node->compare_ops.push_back(op);
        found = true;
        break;
      }
    }
    if (!found && skip_name("in")) {
      node->compare_ops.push_back(CompareOp::in);
    } else if (!found && at_name("not") && peek().kind == TokenKind::name && peek().value == "in") {
      next();
      next();
      node->compare_ops.push_back(CompareOp::not_in);
    } else if (!found) {
      break;
    }
    node->args.push_back(parse_math1());
  }
  if (node->compare_ops.empty()) return first;
  node->args.insert(node->args.begin(), std::move(first));
  return node;
}

static ExprPtr make_binary(ExprPtr left, BinaryOp op, ExprPtr right, SourcePos pos) {
  auto node = std::make_unique<Expr>();
  node->kind = ExprKind::binary;
  node->pos = pos;
  node->op = op;
  node->args.push_back(std::move(left));
  node->args.push_back(std::move(right));
  return node;
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  while (at_op("+") || at_op("-")) {
    const Token& tok = next();
    left = make_binary(std::move(left), tok.value == "+" ? BinaryOp::add : BinaryOp::sub,
                       parse_concat(), tok.pos);
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  SourcePos pos = current().pos;
  ExprPtr first = parse_math2();
  if (!at_op("~")) return first;
  auto node = make(ExprKind::concat, pos);
  node->args.push_back(std::move(first));
  while (skip_op("~")) node->args.push_back(parse_math2());
  return node;
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
    const Token& tok = next();
    BinaryOp op = tok.value == "*"    ? BinaryOp::mul
                  : tok.value == "/"  ? BinaryOp::div
                  : tok.value == "//" ? BinaryOp::floordiv
                                      : BinaryOp::mod;
    left = make_binary(std::move(left), op, parse_pow(), tok.pos);
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary();
  while (at_op("**")) {
    SourcePos pos = next().pos;
    left = make_binary(std::move(left), BinaryOp::pow, parse_unary(), pos);
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard guard(*this);
  ExprPtr node;
  if (at_op("-") || at_op("+")) {
    const Token& tok = next();
    node = make(tok.value == "-" ? ExprKind::negate : ExprKind::positive, tok.pos);
    node->args.push_back(parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expr(std::move(node));
  return node;
}

}  // namespace hadron::chat
