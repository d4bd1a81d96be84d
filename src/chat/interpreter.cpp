#include "chat/interpreter.h"

#include "chat/builtins.h"
#include "core/error.h"

namespace hadron::chat {

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s; s = s->parent.get())
    for (const auto& [k, v] : s->vars)
      if (k == name) return &v;
  return nullptr;
}

void Scope::set(const std::string& name, Value value) {
  for (auto& [k, v] : vars) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  vars.emplace_back(name, std::move(value));
}

Interpreter::Interpreter(const RenderOptions& options, const Value& context) : options_(options) {
  auto globals = std::make_shared<Scope>();
  DictData g;
  add_globals(g, options.now);
  for (auto& [k, v] : g.entries) globals->vars.emplace_back(k.as_string(), v);
  // namespace() is wrapped so that every namespace is known and can be cleared at the end.
  Value make_ns = *globals->find("namespace");
  globals->set("namespace", Value::function("namespace", [this, make_ns](CallArgs& args) {
                 Value ns = make_ns.as_function().call(args);
                 namespaces_.push_back(ns);
                 return ns;
               }));
  auto context_scope = std::make_shared<Scope>(Scope{globals, {}});
  if (!context.is_dict()) input_error("chat template context must be a JSON object");
  for (const auto& [k, v] : context.as_dict().entries) context_scope->set(k.as_string(), v);
  root_ = std::make_shared<Scope>(Scope{context_scope, {}});
  scope_ = root_;
}

Interpreter::~Interpreter() {
  for (const Value& ns : namespaces_) ns.as_namespace().attrs.clear();
}

std::string Interpreter::render(const Body& body) { return capture(body); }

void Interpreter::write(std::string_view text) {
  written_bytes_ += text.size();
  if (written_bytes_ > options_.limits.max_output_bytes)
    input_error("template output exceeds the limit of {} bytes", options_.limits.max_output_bytes);
  out_->append(text);
}

std::string Interpreter::capture(const Body& body) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  exec_body(body);
  out_ = saved;
  return buffer;
}

Interpreter::Flow Interpreter::exec_body(const Body& body) {
  for (const StmtPtr& stmt : body) {
    Flow flow = exec(*stmt);
    if (flow != Flow::normal) return flow;
  }
  return Flow::normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& stmt) {
  try {
    return exec_stmt(stmt);
  } catch (const InputError& e) {
    if (std::string_view(e.what()).starts_with("template:")) throw;
    input_error("template:{}:{}: {}", stmt.pos.line, stmt.pos.column, e.what());
  }
}

Interpreter::Flow Interpreter::exec_stmt(const Stmt& stmt) {
  switch (stmt.kind) {
    case StmtKind::text:
      write(stmt.text);
      return Flow::normal;
    case StmtKind::output:
      write(to_str(eval(*stmt.expr)));
      return Flow::normal;
    case StmtKind::if_chain:
      for (const IfBranch& branch : stmt.branches)
        if (!branch.condition || truthy(eval(*branch.condition))) return exec_body(branch.body);
      return Flow::normal;
    case StmtKind::for_loop:
      exec_for(stmt);
      return Flow::normal;
    case StmtKind::set:
      exec_set(stmt);
      return Flow::normal;
    case StmtKind::set_block: {
      Value v = apply_filters(stmt.filters, Value(capture(stmt.body)));
      scope_->set(stmt.targets[0], std::move(v));
      return Flow::normal;
    }
    case StmtKind::macro:
      scope_->set(stmt.name, make_macro(stmt));
      return Flow::normal;
    case StmtKind::call_block:
      exec_call_block(stmt);
      return Flow::normal;
    case StmtKind::filter_block:
      write(to_str(apply_filters(stmt.filters, Value(capture(stmt.body)))));
      return Flow::normal;
    case StmtKind::with_block:
      return exec_with(stmt);
    case StmtKind::loop_break:
      return Flow::break_loop;
    case StmtKind::loop_continue:
      return Flow::continue_loop;
  }
  return Flow::normal;
}

Value Interpreter::apply_filters(const std::vector<ExprPtr>& filters, Value value) {
  for (const ExprPtr& f : filters) value = eval_filter(*f, &value);
  return value;
}

void Interpreter::bind_targets(const std::vector<std::string>& targets, const Value& value) {
  if (targets.size() == 1) {
    scope_->set(targets[0], value);
    return;
  }
  std::vector<Value> parts = iterate(value);
  if (parts.size() > targets.size())
    input_error("ValueError: too many values to unpack (expected {})", targets.size());
  if (parts.size() < targets.size())
    input_error("ValueError: not enough values to unpack (expected {}, got {})", targets.size(),
                parts.size());
  for (size_t i = 0; i < targets.size(); ++i) scope_->set(targets[i], parts[i]);
}

std::vector<Value> Interpreter::filtered_items(const Stmt& stmt, const Value& iterable) {
  std::vector<Value> items = iterate(iterable);
  if (!stmt.condition) return items;
  std::vector<Value> kept;
  auto outer = scope_;
  for (const Value& item : items) {
    scope_ = std::make_shared<Scope>(Scope{outer, {}});
    bind_targets(stmt.targets, item);
    if (truthy(eval(*stmt.condition))) kept.push_back(item);
  }
  scope_ = outer;
  return kept;
}

Value Interpreter::loop_object(size_t idx, const std::vector<Value>& items) {
  size_t n = items.size();
  DictData loop;
  loop.entries.reserve(12);
  auto add = [&](const char* key, Value v) { loop.entries.emplace_back(Value(key), std::move(v)); };
  add("index", Value(idx + 1));
  add("index0", Value(idx));
  add("revindex", Value(n - idx));
  add("revindex0", Value(n - idx - 1));
  add("first", Value(idx == 0));
  add("last", Value(idx + 1 == n));
  add("length", Value(n));
  add("depth", Value(int64_t{1}));
  add("depth0", Value(int64_t{0}));
  add("previtem", idx > 0 ? items[idx - 1] : Value::undefined("there is no previous item"));
  add("nextitem", idx + 1 < n ? items[idx + 1] : Value::undefined("there is no next item"));
  add("cycle", Value::function("cycle", [idx](CallArgs& args) {
        if (args.positional.empty()) input_error("TypeError: no items for cycling given");
        return args.positional[idx % args.positional.size()];
      }));
  return Value::dict(std::move(loop));
}

void Interpreter::exec_for(const Stmt& stmt) {
  std::vector<Value> items = filtered_items(stmt, eval(*stmt.expr));
  auto outer = scope_;
  for (size_t i = 0; i < items.size(); ++i) {
    if (++n_iterations_ > options_.limits.max_loop_iterations)
      input_error("template loops exceed the limit of {} iterations",
                  options_.limits.max_loop_iterations);
    scope_ = std::make_shared<Scope>(Scope{outer, {}});
    bind_targets(stmt.targets, items[i]);
    scope_->set("loop", loop_object(i, items));
    Flow flow = exec_body(stmt.body);
    scope_ = outer;
    if (flow == Flow::break_loop) break;
  }
  if (items.empty()) exec_body(stmt.else_body);
}

void Interpreter::exec_set(const Stmt& stmt) {
  Value value = eval(*stmt.expr);
  if (stmt.attribute.empty()) {
    bind_targets(stmt.targets, value);
    return;
  }
  const Value* target = scope_->find(stmt.targets[0]);
  if (!target || !target->is_namespace())
    input_error("TemplateRuntimeError: cannot assign attribute on non-namespace object");
  target->as_namespace().set(stmt.attribute, std::move(value));
}

Interpreter::Flow Interpreter::exec_with(const Stmt& stmt) {
  auto outer = scope_;
  auto inner = std::make_shared<Scope>(Scope{outer, {}});
  for (const auto& [name, expr] : stmt.assignments) inner->set(name, eval(*expr));
  scope_ = inner;
  Flow flow = exec_body(stmt.body);
  scope_ = outer;
  return flow;
}

}  // namespace hadron::chat
