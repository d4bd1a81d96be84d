// Primary expressions (literals, names, brackets), postfix access, calls, filters and tests.
#include <cerrno>
#include <cstdlib>

#include "chat/builtins.h"
#include "chat/parser.h"
#include "core/error.h"

namespace hadron::chat {

ExprPtr Parser::parse_primary() {
  const Token& tok = current();
  auto lit = make(ExprKind::literal, tok.pos);
  switch (tok.kind) {
    case TokenKind::name: {
      next();
      const std::string& n = tok.value;
      if (n == "true" || n == "True")
        lit->literal = Value(true);
      else if (n == "false" || n == "False")
        lit->literal = Value(false);
      else if (n == "none" || n == "None")
        lit->literal = Value::none();
      else {
        lit->kind = ExprKind::name;
        lit->name = n;
      }
      return lit;
    }
    case TokenKind::string: {
      std::string s;
      while (current().kind == TokenKind::string) s += next().value;  // adjacent literals join
      lit->literal = Value(std::move(s));
      return lit;
    }
    case TokenKind::integer: {
      errno = 0;
      long long v = std::strtoll(next().value.c_str(), nullptr, 10);
      if (errno == ERANGE) fail_at(tok.pos, "integer literal too large");
      lit->literal = Value(static_cast<int64_t>(v));
      return lit;
    }
    case TokenKind::floating:
      lit->literal = Value(std::strtod(next().value.c_str(), nullptr));
      return lit;
    case TokenKind::op:
      if (skip_op("(")) {
        ExprPtr inner = parse_tuple(true, true);
        expect_op(")");
        return inner;
      }
      if (at_op("[")) return parse_list();
      if (at_op("{")) return parse_dict();
      break;
    case TokenKind::text:
    case TokenKind::variable_begin:
    case TokenKind::variable_end:
    case TokenKind::block_begin:
    case TokenKind::block_end:
    case TokenKind::end:
      break;
  }
  fail(tok.kind == TokenKind::end ? "unexpected end of template" : "unexpected token");
}

ExprPtr Parser::parse_list() {
  auto node = make(ExprKind::list, next().pos);
  while (!at_op("]")) {
    if (!node->args.empty()) expect_op(",");
    if (at_op("]")) break;
    node->args.push_back(parse_expression());
  }
  expect_op("]");
  return node;
}

ExprPtr Parser::parse_dict() {
  auto node = make(ExprKind::dict, next().pos);
  while (!at_op("}")) {
    if (!node->args.empty()) expect_op(",");
    if (at_op("}")) break;
    node->args.push_back(parse_expression());
    expect_op(":");
    node->args.push_back(parse_expression());
  }
  expect_op("}");
  return node;
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  while (true) {
    DepthGuard guard(*this);
    if (at_op(".")) {
      SourcePos pos = next().pos;
      if (current().kind == TokenKind::integer) {
        auto index = make(ExprKind::literal, current().pos);
        index->literal =
            Value(static_cast<int64_t>(std::strtoll(next().value.c_str(), nullptr, 10)));
        auto sub = make(ExprKind::subscript, pos);
        sub->args.push_back(std::move(node));
        sub->args.push_back(std::move(index));
        node = std::move(sub);
        continue;
      }
      auto attr = make(ExprKind::attribute, pos);
      attr->name = expect(TokenKind::name, "attribute name").value;
      attr->args.push_back(std::move(node));
      node = std::move(attr);
    } else if (at_op("[")) {
      node = parse_subscript(std::move(node));
    } else if (at_op("(")) {
      auto call = make(ExprKind::call, current().pos);
      call->args.push_back(std::move(node));
      parse_call_args(*call);
      node = std::move(call);
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  auto sub = make(ExprKind::subscript, next().pos);
  sub->args.push_back(std::move(node));
  std::vector<ExprPtr> indices;
  while (!at_op("]")) {
    if (!indices.empty()) expect_op(",");
    indices.push_back(parse_subscribed());
  }
  expect_op("]");
  if (indices.empty()) fail("expected subscript expression");
  if (indices.size() == 1) {
    sub->args.push_back(std::move(indices[0]));
  } else {
    auto tuple = make(ExprKind::tuple, sub->pos);
    tuple->args = std::move(indices);
    sub->args.push_back(std::move(tuple));
  }
  return sub;
}

ExprPtr Parser::parse_subscribed() {
  SourcePos pos = current().pos;
  ExprPtr start;
  if (!at_op(":")) {
    start = parse_expression();
    if (!at_op(":")) return start;
  }
  next();  // ':'
  auto slice = make(ExprKind::slice, pos);
  slice->args.push_back(std::move(start));
  ExprPtr stop, step;
  if (!at_op("]") && !at_op(",") && !at_op(":")) stop = parse_expression();
  if (skip_op(":") && !at_op("]") && !at_op(",")) step = parse_expression();
  slice->args.push_back(std::move(stop));
  slice->args.push_back(std::move(step));
  return slice;
}

void Parser::parse_call_args(Expr& call) {
  expect_op("(");
  bool first = true;
  while (!at_op(")")) {
    if (!first) expect_op(",");
    first = false;
    if (at_op(")")) break;
    if (at_op("*") || at_op("**")) fail("*args and **kwargs are not supported");
    if (current().kind == TokenKind::name && peek().kind == TokenKind::op && peek().value == "=") {
      std::string name = next().value;
      next();
      call.kwargs.emplace_back(std::move(name), parse_expression());
    } else {
      if (!call.kwargs.empty()) fail("positional argument after keyword argument");
      call.args.push_back(parse_expression());
    }
  }
  expect_op(")");
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (at_op("|"))
      node = parse_filter(std::move(node));
    else if (at_name("is"))
      node = parse_test(std::move(node));
    else if (at_op("(")) {
      auto call = make(ExprKind::call, current().pos);
      call->args.push_back(std::move(node));
      parse_call_args(*call);
      node = std::move(call);
    } else
      return node;
  }
}

ExprPtr Parser::parse_filter(ExprPtr node) {
  DepthGuard guard(*this);
  skip_op("|");
  auto filter = make(ExprKind::filter, current().pos);
  filter->name = expect(TokenKind::name, "filter name").value;
  while (skip_op(".")) filter->name += "." + expect(TokenKind::name, "filter name").value;
  filter->args.push_back(std::move(node));
  if (at_op("(")) parse_call_args(*filter);
  return filter;
}

ExprPtr Parser::parse_test(ExprPtr node) {
  DepthGuard guard(*this);
  SourcePos pos = next().pos;  // 'is'
  bool negated = skip_name("not");
  auto test = make(ExprKind::test, current().pos);
  test->name = expect(TokenKind::name, "test name").value;
  while (skip_op(".")) test->name += "." + expect(TokenKind::name, "test name").value;
  test->args.push_back(std::move(node));
  TokenKind k = current().kind;
  if (at_op("(")) {
    parse_call_args(*test);
  } else if ((k == TokenKind::name || k == TokenKind::string || k == TokenKind::integer ||
              k == TokenKind::floating || at_op("[") || at_op("{")) &&
             !at_name("else") && !at_name("or") && !at_name("and")) {
    if (at_name("is")) fail("You cannot chain multiple tests with is");
    test->args.push_back(parse_postfix(parse_primary()));
  }
  if (!negated) return test;
  auto neg = make(ExprKind::logical_not, pos);
  neg->args.push_back(std::move(test));
  return neg;
}

}  // namespace hadron::chat
