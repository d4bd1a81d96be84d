// Expression evaluation with Python's semantics (`and`/`or` return an operand, comparisons
// chain, `~` joins str() of both sides).
#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "core/error.h"

namespace hadron::chat {

Value Interpreter::eval(const Expr& expr) {
  try {
    return eval_inner(expr);
  } catch (const InputError& e) {
    if (std::string_view(e.what()).starts_with("template:")) throw;
    input_error("template:{}:{}: {}", expr.pos.line, expr.pos.column, e.what());
  }
}

Value Interpreter::eval_inner(const Expr& e) {
  switch (e.kind) {
    case ExprKind::literal:
      return e.literal;
    case ExprKind::name:
      return eval_name(e);
    case ExprKind::list:
    case ExprKind::tuple:
    case ExprKind::dict:
      return eval_collection(e);
    case ExprKind::attribute:
      return get_attribute(eval(*e.args[0]), e.name);
    case ExprKind::subscript:
      return eval_subscript(e);
    case ExprKind::slice:
      input_error("TypeError: a slice is only valid inside []");
    case ExprKind::call:
      return eval_call(e);
    case ExprKind::filter:
      return eval_filter(e, nullptr);
    case ExprKind::test:
      return eval_test(e);
    case ExprKind::logical_not:
      return Value(!truthy(eval(*e.args[0])));
    case ExprKind::negate:
      return negate(eval(*e.args[0]));
    case ExprKind::positive: {
      Value v = eval(*e.args[0]);
      if (v.is_undefined()) fail_undefined(v);
      if (!v.is_number())
        input_error("TypeError: bad operand type for unary +: '{}'", type_name(v));
      return v.is_bool() ? Value(v.int_value()) : v;
    }
    case ExprKind::binary:
      return binary_op(e.op, eval(*e.args[0]), eval(*e.args[1]), options_.limits.max_output_bytes);
    case ExprKind::compare:
      return eval_compare(e);
    case ExprKind::concat: {
      std::string out;
      for (const ExprPtr& arg : e.args) out += to_str(eval(*arg));
      if (out.size() > options_.limits.max_output_bytes)
        input_error("MemoryError: string exceeds the output limit");
      return Value(std::move(out));
    }
    case ExprKind::logical_and: {
      Value left = eval(*e.args[0]);
      return truthy(left) ? eval(*e.args[1]) : left;
    }
    case ExprKind::logical_or: {
      Value left = eval(*e.args[0]);
      return truthy(left) ? left : eval(*e.args[1]);
    }
    case ExprKind::conditional:
      if (truthy(eval(*e.args[1]))) return eval(*e.args[0]);
      if (e.args[2]) return eval(*e.args[2]);
      return Value::undefined(
          "the inline if-expression evaluated to false and no else section was defined.");
  }
  return Value();
}

Value Interpreter::eval_name(const Expr& e) {
  if (const Value* v = scope_->find(e.name)) return *v;
  return Value::undefined(fmt::format("'{}' is undefined", e.name));
}

Value Interpreter::eval_collection(const Expr& e) {
  if (e.kind == ExprKind::dict) {
    DictData d;
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      Value key = eval(*e.args[i]);
      if (key.is_list() && !key.as_list().is_tuple())
        input_error("TypeError: unhashable type: 'list'");
      if (key.is_dict()) input_error("TypeError: unhashable type: 'dict'");
      d.set(std::move(key), eval(*e.args[i + 1]));
    }
    return Value::dict(std::move(d));
  }
  std::vector<Value> items;
  items.reserve(e.args.size());
  for (const ExprPtr& arg : e.args) items.push_back(eval(*arg));
  return Value::list(std::move(items), e.kind == ExprKind::tuple);
}

Value Interpreter::eval_subscript(const Expr& e) {
  Value obj = eval(*e.args[0]);
  const Expr& index = *e.args[1];
  if (index.kind != ExprKind::slice) return get_item(obj, eval(index));
  Value bounds[3];
  const Value* ptrs[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) {
    if (!index.args[i]) continue;
    bounds[i] = eval(*index.args[i]);
    ptrs[i] = &bounds[i];
  }
  return get_slice(obj, ptrs[0], ptrs[1], ptrs[2]);
}

CallArgs Interpreter::eval_args(const Expr& e, size_t first_positional) {
  CallArgs args;
  for (size_t i = first_positional; i < e.args.size(); ++i)
    args.positional.push_back(eval(*e.args[i]));
  for (const auto& [name, expr] : e.kwargs) args.named.emplace_back(name, eval(*expr));
  return args;
}

Value Interpreter::eval_call(const Expr& e, const Value* caller) {
  Value callee = eval(*e.args[0]);
  CallArgs args = eval_args(e, 1);
  if (caller) args.named.emplace_back("caller", *caller);
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_function())
    input_error("TypeError: '{}' object is not callable", type_name(callee));
  return callee.as_function().call(args);
}

Value Interpreter::eval_filter(const Expr& e, const Value* input) {
  Value value = input ? *input : eval(*e.args[0]);
  CallArgs args = eval_args(e, 1);
  return apply_filter(e.name, value, args);
}

Value Interpreter::eval_test(const Expr& e) {
  Value value = eval(*e.args[0]);
  CallArgs args = eval_args(e, 1);
  return Value(apply_test(e.name, value, args));
}

static bool compare_one(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::eq:
      return equals(a, b);
    case CompareOp::ne:
      return !equals(a, b);
    case CompareOp::in:
      return contains(b, a);
    case CompareOp::not_in:
      return !contains(b, a);
    case CompareOp::lt:
    case CompareOp::le:
    case CompareOp::gt:
    case CompareOp::ge:
      break;
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  int c = compare(a, b);
  switch (op) {
    case CompareOp::lt:
      return c < 0;
    case CompareOp::le:
      return c <= 0;
    case CompareOp::gt:
      return c > 0;
    case CompareOp::ge:
      return c >= 0;
    case CompareOp::eq:
    case CompareOp::ne:
    case CompareOp::in:
    case CompareOp::not_in:
      break;
  }
  return false;
}

// Python chains comparisons: a < b < c is a < b and b < c, b evaluated once.
Value Interpreter::eval_compare(const Expr& e) {
  Value left = eval(*e.args[0]);
  for (size_t i = 0; i < e.compare_ops.size(); ++i) {
    Value right = eval(*e.args[i + 1]);
    if (!compare_one(e.compare_ops[i], left, right)) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

}  // namespace hadron::chat
