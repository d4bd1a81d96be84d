// Executes a parsed template: statements in interpreter.cpp, expressions in eval.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chat/ast.h"
#include "chat/template.h"
#include "chat/value.h"

namespace hadron::chat {

// A variable scope: the template's top level, one loop iteration, a macro call, a with block.
struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(std::string_view name) const;
  void set(const std::string& name, Value value);
};

class Interpreter {
 public:
  Interpreter(const RenderOptions& options, const Value& context);
  ~Interpreter();
  std::string render(const Body& body);

 private:
  enum class Flow { normal, break_loop, continue_loop };

  // Statements.
  Flow exec_body(const Body& body);
  Flow exec(const Stmt& stmt);
  Flow exec_stmt(const Stmt& stmt);
  void exec_for(const Stmt& stmt);
  std::vector<Value> filtered_items(const Stmt& stmt, const Value& iterable);
  Value loop_object(size_t idx, const std::vector<Value>& items);
  void exec_set(const Stmt& stmt);
  Flow exec_with(const Stmt& stmt);
  void bind_targets(const std::vector<std::string>& targets, const Value& value);
  Value make_macro(const Stmt& stmt);
  Value call_macro(const Stmt& stmt, const std::weak_ptr<Scope>& def_scope, CallArgs& args);
  void exec_call_block(const Stmt& stmt);
  std::string capture(const Body& body);
  Value apply_filters(const std::vector<ExprPtr>& filters, Value value);
  void write(std::string_view text);

  // Expressions.
  Value eval(const Expr& expr);
  Value eval_inner(const Expr& expr);
  Value eval_name(const Expr& expr);
  Value eval_collection(const Expr& expr);
  Value eval_subscript(const Expr& expr);
  Value eval_call(const Expr& expr, const Value* caller = nullptr);
  Value eval_filter(const Expr& expr, const Value* input);
  Value eval_test(const Expr& expr);
  Value eval_compare(const Expr& expr);
  CallArgs eval_args(const Expr& expr, size_t first_positional);

  const RenderOptions& options_;
  std::shared_ptr<Scope> root_;
  std::shared_ptr<Scope> scope_;
  std::string* out_ = nullptr;
  size_t written_bytes_ = 0;
  int64_t n_iterations_ = 0;
  int call_depth_ = 0;
  int64_t n_macro_calls_ = 0;
  std::vector<Value> namespaces_;  // cleared after render: breaks reference cycles
};

}  // namespace hadron::chat
