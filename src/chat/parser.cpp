// Statements: {% if %}, {% for %}, {% set %}, {% macro %}, {% call %}, {% filter %},
// {% with %}, {% generation %} (transformers' AssistantTracker), {% break %}, {% continue %}.
#include "chat/parser.h"

#include <algorithm>

#include "core/error.h"

namespace hadron::chat {

constexpr int kMaxParseDepth = 200;

DepthGuard::DepthGuard(Parser& p) : parser(p) {
  if (++parser.depth_ > kMaxParseDepth) parser.fail("template nested too deeply");
}
DepthGuard::~DepthGuard() { --parser.depth_; }

static StmtPtr make_stmt(StmtKind kind, SourcePos pos) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = kind;
  stmt->pos = pos;
  return stmt;
}

Body parse_template(const std::string& source) {
  Body body = Parser(tokenize_template(source)).parse();
  check_filters_and_tests(body);
  return body;
}

Body Parser::parse() { return parse_body({}); }

Body Parser::parse_body(std::initializer_list<std::string_view> end_names) {
  DepthGuard guard(*this);
  Body body;
  while (true) {
    const Token& tok = current();
    switch (tok.kind) {
      case TokenKind::text: {
        auto stmt = make_stmt(StmtKind::text, tok.pos);
        stmt->text = tok.value;
        body.push_back(std::move(stmt));
        next();
        break;
      }
      case TokenKind::variable_begin: {
        auto stmt = make_stmt(StmtKind::output, tok.pos);
        next();
        stmt->expr = parse_tuple();
        expect(TokenKind::variable_end, "end of print statement");
        body.push_back(std::move(stmt));
        break;
      }
      case TokenKind::block_begin: {
        next();
        if (current().kind == TokenKind::name &&
            std::find(end_names.begin(), end_names.end(), current().value) != end_names.end())
          return body;
        body.push_back(parse_statement());
        break;
      }
      case TokenKind::end:
        if (end_names.size() == 0) return body;
        fail(fmt::format("unexpected end of template, expected '{}'", *end_names.begin()));
      case TokenKind::variable_end:
      case TokenKind::block_end:
      case TokenKind::name:
      case TokenKind::string:
      case TokenKind::integer:
      case TokenKind::floating:
      case TokenKind::op:
        fail("unexpected token");
    }
  }
}

// Parses `body {% end_name %}` after the statement head's block end.
Body Parser::parse_block_body(std::string_view end_name) {
  expect(TokenKind::block_end, "end of statement block");
  Body body = parse_body({end_name});
  next();
  expect(TokenKind::block_end, "end of statement block");
  return body;
}

StmtPtr Parser::parse_statement() {
  const Token& tok = expect(TokenKind::name, "statement name");
  const std::string& name = tok.value;
  if (name == "if") return parse_if();
  if (name == "for") return parse_for();
  if (name == "set") return parse_set();
  if (name == "macro") return parse_macro();
  if (name == "call") return parse_call_block();
  if (name == "filter") return parse_filter_block();
  if (name == "with") return parse_with();
  if (name == "generation") {
    auto stmt = make_stmt(StmtKind::with_block, tok.pos);
    stmt->body = parse_block_body("endgeneration");
    return stmt;
  }
  if (name == "break" || name == "continue") {
    auto stmt =
        make_stmt(name == "break" ? StmtKind::loop_break : StmtKind::loop_continue, tok.pos);
    expect(TokenKind::block_end, "end of statement block");
    return stmt;
  }
  fail_at(tok.pos, fmt::format("Encountered unknown tag '{}'", name));
}

StmtPtr Parser::parse_if() {
  auto stmt = make_stmt(StmtKind::if_chain, tokens_[idx_ - 1].pos);
  while (true) {
    IfBranch branch;
    branch.condition = parse_tuple(false);
    expect(TokenKind::block_end, "end of statement block");
    branch.body = parse_body({"elif", "else", "endif"});
    stmt->branches.push_back(std::move(branch));
    std::string which = next().value;
    if (which == "elif") continue;
    if (which == "else") {
      expect(TokenKind::block_end, "end of statement block");
      stmt->branches.push_back(IfBranch{nullptr, parse_body({"endif"})});
      next();
    }
    expect(TokenKind::block_end, "end of statement block");
    break;
  }
  return stmt;
}

std::vector<std::string> Parser::parse_target_names() {
  std::vector<std::string> names;
  bool parens = skip_op("(");
  do {
    names.push_back(expect(TokenKind::name, "assignment target").value);
  } while (skip_op(","));
  if (parens) expect_op(")");
  return names;
}

StmtPtr Parser::parse_for() {
  auto stmt = make_stmt(StmtKind::for_loop, tokens_[idx_ - 1].pos);
  stmt->targets = parse_target_names();
  expect_name("in");
  stmt->expr = parse_tuple(false, false, "recursive");
  if (skip_name("if")) stmt->condition = parse_expression();
  if (at_name("recursive")) fail("recursive loops are not supported");
  expect(TokenKind::block_end, "end of statement block");
  stmt->body = parse_body({"endfor", "else"});
  if (next().value == "else") {
    expect(TokenKind::block_end, "end of statement block");
    stmt->else_body = parse_body({"endfor"});
    next();
  }
  expect(TokenKind::block_end, "end of statement block");
  return stmt;
}

StmtPtr Parser::parse_set() {
  auto stmt = make_stmt(StmtKind::set, tokens_[idx_ - 1].pos);
  if (current().kind == TokenKind::name && peek().kind == TokenKind::op && peek().value == ".") {
    stmt->targets.push_back(next().value);
    next();
    stmt->attribute = expect(TokenKind::name, "attribute name").value;
  } else {
    stmt->targets = parse_target_names();
  }
  if (skip_op("=")) {
    stmt->expr = parse_tuple();
    expect(TokenKind::block_end, "end of statement block");
    return stmt;
  }
  if (stmt->targets.size() != 1 || !stmt->attribute.empty()) fail("expected '='");
  stmt->kind = StmtKind::set_block;
  while (at_op("|")) stmt->filters.push_back(parse_filter(nullptr));
  stmt->body = parse_block_body("endset");
  return stmt;
}

void Parser::parse_params(std::vector<Param>& params) {
  expect_op("(");
  while (!skip_op(")")) {
    if (!params.empty()) expect_op(",");
    Param param{expect(TokenKind::name, "parameter name").value, nullptr};
    if (skip_op("=")) param.default_value = parse_expression();
    params.push_back(std::move(param));
  }
}

StmtPtr Parser::parse_macro() {
  auto stmt = make_stmt(StmtKind::macro, tokens_[idx_ - 1].pos);
  stmt->name = expect(TokenKind::name, "macro name").value;
  parse_params(stmt->params);
  stmt->body = parse_block_body("endmacro");
  return stmt;
}

StmtPtr Parser::parse_call_block() {
  auto stmt = make_stmt(StmtKind::call_block, tokens_[idx_ - 1].pos);
  if (at_op("(")) parse_params(stmt->params);
  stmt->expr = parse_expression();
  if (stmt->expr->kind != ExprKind::call) fail("expected call");
  stmt->body = parse_block_body("endcall");
  return stmt;
}

StmtPtr Parser::parse_filter_block() {
  auto stmt = make_stmt(StmtKind::filter_block, tokens_[idx_ - 1].pos);
  do {
    stmt->filters.push_back(parse_filter(nullptr));
  } while (at_op("|"));
  stmt->body = parse_block_body("endfilter");
  return stmt;
}

StmtPtr Parser::parse_with() {
  auto stmt = make_stmt(StmtKind::with_block, tokens_[idx_ - 1].pos);
  while (current().kind != TokenKind::block_end) {
    if (!stmt->assignments.empty()) expect_op(",");
    std::string name = expect(TokenKind::name, "assignment target").value;
    expect_op("=");
    stmt->assignments.emplace_back(std::move(name), parse_expression());
  }
  stmt->body = parse_block_body("endwith");
  return stmt;
}

}  // namespace hadron::chat
