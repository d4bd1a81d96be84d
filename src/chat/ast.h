// The syntax tree of a parsed template. Child layout per kind is documented on each enum value.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/lexer.h"
#include "chat/value.h"

namespace hadron::chat {

enum class ExprKind {
  literal,      // literal
  name,         // name
  list,         // args: items
  tuple,        // args: items
  dict,         // args: key0, value0, key1, value1, ...
  attribute,    // args[0].name
  subscript,    // args[0][args[1]]
  slice,        // args: start, stop, step (each may be null)
  call,         // args[0](args[1..], kwargs)
  filter,       // args[0] | name(args[1..], kwargs); args[0] null inside a filter block
  test,         // args[0] is name(args[1..], kwargs)
  logical_not,  // not args[0]
  negate,       // -args[0]
  positive,     // +args[0]
  binary,       // args[0] op args[1]
  compare,      // args[0] compare_ops[0] args[1] compare_ops[1] args[2] ...
  concat,       // args[0] ~ args[1] ~ ...
  logical_and,  // args[0] and args[1]
  logical_or,   // args[0] or args[1]
  conditional,  // args[0] if args[1] else args[2] (args[2] may be null)
};

enum class BinaryOp { add, sub, mul, div, floordiv, mod, pow };
enum class CompareOp { eq, ne, lt, le, gt, ge, in, not_in };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using KwArgs = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
  ExprKind kind;
  SourcePos pos;
  Value literal;
  std::string name;
  std::vector<ExprPtr> args;
  KwArgs kwargs;
  BinaryOp op = BinaryOp::add;
  std::vector<CompareOp> compare_ops;
};

enum class StmtKind {
  text,          // text
  output,        // {{ expr }}
  if_chain,      // branches (the else branch has a null condition)
  for_loop,      // for targets in expr [if condition]: body [else: else_body]
  set,           // set targets = expr; with attribute: set targets[0].attribute = expr
  set_block,     // set targets[0] [| filters]: body
  macro,         // macro name(params): body
  call_block,    // call(params) expr: body (body becomes `caller`)
  filter_block,  // filter filters: body
  with_block,    // with assignments: body
  loop_break,
  loop_continue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct IfBranch {
  ExprPtr condition;
  Body body;
};

struct Param {
  std::string name;
  ExprPtr default_value;  // null when the parameter has none
};

struct Stmt {
  StmtKind kind;
  SourcePos pos;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::string> targets;
  std::string attribute;
  std::vector<IfBranch> branches;
  Body body;
  Body else_body;
  std::string name;
  std::vector<Param> params;
  std::vector<ExprPtr> filters;  // filter expressions whose args[0] is null
  KwArgs assignments;
};

}  // namespace hadron::chat
