// Compile-time checks jinja2 makes after parsing: unknown filters and tests outside soft frames.
#include "chat/builtins.h"
#include "chat/parser.h"
#include "core/error.h"

namespace hadron::chat {
namespace {

void check_expr(const Expr* e, bool soft);

void check_body(const Body& body, bool soft);

void check_stmt(const Stmt& s, bool soft) {
  switch (s.kind) {
    case StmtKind::text:
    case StmtKind::loop_break:
    case StmtKind::loop_continue:
      return;
    case StmtKind::output:
    case StmtKind::set:
      check_expr(s.expr.get(), soft);
      return;
    case StmtKind::if_chain:
      for (const IfBranch& b : s.branches) {
        check_expr(b.condition.get(), true);
        check_body(b.body, true);
      }
      return;
    case StmtKind::for_loop:
      check_expr(s.expr.get(), soft);
      check_expr(s.condition.get(), false);
      check_body(s.body, false);
      check_body(s.else_body, soft);
      return;
    case StmtKind::macro:
    case StmtKind::call_block:
      for (const Param& p : s.params) check_expr(p.default_value.get(), false);
      check_expr(s.expr.get(), soft);
      check_body(s.body, false);
      return;
    case StmtKind::set_block:
    case StmtKind::filter_block:
      for (const ExprPtr& f : s.filters) check_expr(f.get(), soft);
      check_body(s.body, false);
      return;
    case StmtKind::with_block:
      for (const auto& [name, value] : s.assignments) check_expr(value.get(), soft);
      check_body(s.body, false);
      return;
  }
}

void check_body(const Body& body, bool soft) {
  for (const StmtPtr& s : body) check_stmt(*s, soft);
}

void check_expr(const Expr* e, bool soft) {
  if (!e) return;
  if (e->kind == ExprKind::conditional) soft = true;
  if (!soft && e->kind == ExprKind::filter && !is_known_filter(e->name))
    input_error("template:{}:{}: syntax error: No filter named '{}'.", e->pos.line, e->pos.column,
                e->name);
  if (!soft && e->kind == ExprKind::test && !is_known_test(e->name))
    input_error("template:{}:{}: syntax error: No test named '{}'.", e->pos.line, e->pos.column,
                e->name);
  for (const ExprPtr& arg : e->args) check_expr(arg.get(), soft);
  for (const auto& [name, value] : e->kwargs) check_expr(value.get(), soft);
}

}  // namespace

void check_filters_and_tests(const Body& body) { check_body(body, false); }

}  // namespace hadron::chat
