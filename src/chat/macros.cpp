// {% macro %} definitions and calls, and {% call %} blocks.
#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "core/error.h"

namespace hadron::chat {

Value Interpreter::make_macro(const Stmt& stmt) {
  std::weak_ptr<Scope> def_scope = scope_;
  const Stmt* macro = &stmt;
  return Value::function(stmt.name, [this, macro, def_scope](CallArgs& args) {
    return call_macro(*macro, def_scope, args);
  });
}

// Binds arguments like jinja's Macro: positional, then keywords, then defaults evaluated in
// the macro's own scope; a missing parameter is Undefined. `caller` comes from {% call %}.
Value Interpreter::call_macro(const Stmt& stmt, const std::weak_ptr<Scope>& def_scope,
                              CallArgs& args) {
  if (call_depth_ >= options_.limits.max_call_depth)
    input_error("macro calls nested deeper than {}", options_.limits.max_call_depth);
  if (++n_macro_calls_ > options_.limits.max_macro_calls)
    input_error("template makes more than {} macro calls", options_.limits.max_macro_calls);
  if (args.positional.size() > stmt.params.size())
    input_error("TypeError: macro '{}' takes not more than {} argument(s)", stmt.name,
                stmt.params.size());
  std::shared_ptr<Scope> parent = def_scope.lock();
  auto scope = std::make_shared<Scope>(Scope{parent ? parent : root_, {}});
  auto saved = scope_;
  scope_ = scope;
  for (const auto& [name, value] : args.named) {
    bool known = name == "caller";
    for (const Param& p : stmt.params) known = known || p.name == name;
    if (!known)
      input_error("TypeError: macro '{}' takes no keyword argument '{}'", stmt.name, name);
    if (name == "caller") scope->set(name, value);
  }
  for (size_t i = 0; i < stmt.params.size(); ++i) {
    const Param& p = stmt.params[i];
    const Value* given = i < args.positional.size() ? &args.positional[i] : nullptr;
    for (const auto& [name, value] : args.named)
      if (name == p.name) given = &value;
    if (given)
      scope->set(p.name, *given);
    else if (p.default_value)
      scope->set(p.name, eval(*p.default_value));
    else
      scope->set(p.name, Value::undefined(fmt::format("parameter '{}' was not provided", p.name)));
  }
  ++call_depth_;
  std::string out = capture(stmt.body);
  --call_depth_;
  scope_ = saved;
  return Value(std::move(out));
}

void Interpreter::exec_call_block(const Stmt& stmt) {
  std::weak_ptr<Scope> def_scope = scope_;
  const Stmt* block = &stmt;
  Value caller = Value::function("caller", [this, block, def_scope](CallArgs& args) {
    return call_macro(*block, def_scope, args);
  });
  write(to_str(eval_call(*stmt.expr, &caller)));
}

}  // namespace hadron::chat
