// The grammar IR: a recursive transition network over bytes. Each rule is a small automaton
// whose edges read a byte range or a whole sub-rule; a regex is one rule with no references,
// so matching it costs at most its number of states per byte (no backtracking).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grammar/expr.h"

namespace hadron::grammar {

struct Edge {
  uint8_t lo = 0, hi = 0;  // the byte range read, when rule < 0
  int32_t rule = -1;       // a sub-rule read as a whole
  int32_t target = 0;      // the state reached
};

struct State {
  int32_t rule = 0;  // the rule this state belongs to
  uint32_t edges_begin = 0, edges_end = 0;
  bool accepting = false;
};

struct Rule {
  std::string name;
  int32_t start = 0;  // a state
  bool nullable = false;
};

// Bounds on what a user's input may build; past one, compilation is a GrammarError.
struct GrammarLimits {
  int32_t max_rules = 20000;
  int64_t max_states = 500000;
  int32_t max_depth = 200;     // nesting of expressions (and of JSON schemas)
  int32_t max_repeat = 10000;  // the largest bound in {m,n}
  double max_compile_seconds = 5.0;
};

class Grammar {
 public:
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<State>& states() const { return states_; }
  const std::vector<Edge>& edges() const { return edges_; }
  int32_t root() const { return root_; }
  // True when some edge reads the root rule (then its completion is not the end).
  bool root_referenced() const { return root_referenced_; }

 private:
  friend class GrammarBuilder;
  std::vector<Rule> rules_;
  std::vector<State> states_;
  std::vector<Edge> edges_;
  int32_t root_ = 0;
  bool root_referenced_ = false;
};

class GrammarBuilder {
 public:
  explicit GrammarBuilder(GrammarLimits limits = {});
  // A new rule, defined later (rules may refer to each other in any order).
  int32_t declare(std::string name);
  void define(int32_t rule, ExprPtr body);
  bool defined(int32_t rule) const { return bodies_.at(rule) != nullptr; }
  const std::string& name(int32_t rule) const { return names_.at(rule); }
  const GrammarLimits& limits() const { return limits_; }
  // Throws GrammarError past the compile-time limit (front ends call it as they work).
  void check_time() const;
  // Compiles every rule; errors when a rule is undefined, a limit is passed, or `root`
  // accepts no string at all.
  Grammar build(int32_t root) const;

 private:
  GrammarLimits limits_;
  std::vector<std::string> names_;
  std::vector<ExprPtr> bodies_;
  double start_seconds_;
};

}  // namespace hadron::grammar
