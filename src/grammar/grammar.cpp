#include "grammar/grammar.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "grammar/grammar_error.h"

namespace hadron::grammar {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One rule's automaton with epsilon moves, as Thompson's construction builds it.
struct Nfa {
  struct Node {
    std::vector<Edge> edges;
    std::vector<int32_t> eps;
  };
  std::vector<Node> nodes;
};

class RuleCompiler {
 public:
  RuleCompiler(const GrammarBuilder& builder, int64_t& n_states)
      : builder_(builder), n_states_(n_states) {}

  Nfa compile(const Expr& body, int32_t& final_node) {
    const int32_t start = add();
    final_node = walk(body, start, 0);
    return std::move(nfa_);
  }

 private:
  int32_t add() {
    if (++n_states_ > builder_.limits().max_states)
      grammar_error("", "the grammar needs more than {} automaton states",
                    builder_.limits().max_states);
    if ((n_states_ & 1023) == 0) builder_.check_time();
    nfa_.nodes.emplace_back();
    return static_cast<int32_t>(nfa_.nodes.size()) - 1;
  }

  int32_t walk(const Expr& e, int32_t from, int depth) {
    if (depth > builder_.limits().max_depth)
      grammar_error("", "expressions are nested deeper than {}", builder_.limits().max_depth);
    switch (e.kind) {
      case ExprKind::kBytes: {
        const int32_t to = add();
        for (auto [lo, hi] : e.ranges) nfa_.nodes[from].edges.push_back({lo, hi, -1, to});
        return to;
      }
      case ExprKind::kRef: {
        const int32_t to = add();
        nfa_.nodes[from].edges.push_back({0, 0, e.rule, to});
        return to;
      }
      case ExprKind::kSeq: {
        int32_t at = from;
        for (const ExprPtr& item : e.items) at = walk(*item, at, depth + 1);
        return at;
      }
      case ExprKind::kAlt: {
        const int32_t to = add();
        for (const ExprPtr& item : e.items) {
          const int32_t end = walk(*item, from, depth + 1);
          nfa_.nodes[end].eps.push_back(to);
        }
        return to;
      }
      case ExprKind::kRepeat:
        return walk_repeat(e, from, depth);
    }
    return from;
  }

  int32_t walk_repeat(const Expr& e, int32_t from, int depth) {
    const int32_t max_repeat = builder_.limits().max_repeat;
    if (e.min < 0 || e.min > max_repeat || e.max > max_repeat || (e.max >= 0 && e.max < e.min))
      grammar_error("", "repetition bounds {{{},{}}} are outside [0, {}] or reversed", e.min, e.max,
                    max_repeat);
    int32_t at = from;
    for (int32_t i = 0; i < e.min; ++i) at = walk(*e.items[0], at, depth + 1);
    if (e.max < 0) {  // a loop through one state
      const int32_t loop = add();
      nfa_.nodes[at].eps.push_back(loop);
      const int32_t end = walk(*e.items[0], loop, depth + 1);
      nfa_.nodes[end].eps.push_back(loop);
      return loop;
    }
    const int32_t to = add();
    nfa_.nodes[at].eps.push_back(to);
    for (int32_t i = e.min; i < e.max; ++i) {
      at = walk(*e.items[0], at, depth + 1);
      nfa_.nodes[at].eps.push_back(to);
    }
    return to;
  }

  const GrammarBuilder& builder_;
  int64_t& n_states_;
  Nfa nfa_;
};

// The automaton without epsilon moves, restricted to states reachable from the start.
struct RuleAutomaton {
  std::vector<std::vector<Edge>> edges;  // targets are local indices
  std::vector<bool> accepting;
};

RuleAutomaton remove_epsilons(const Nfa& nfa, int32_t final_node, const GrammarBuilder& builder) {
  const auto n = static_cast<int32_t>(nfa.nodes.size());
  std::vector<int32_t> local(n, -1);
  std::vector<int32_t> order = {0};
  local[0] = 0;
  RuleAutomaton out;
  std::vector<int32_t> stamp(n, -1), stack;
  for (size_t i = 0; i < order.size(); ++i) {
    if ((i & 255) == 0) builder.check_time();
    std::vector<Edge> edges;
    bool accepting = false;
    stack = {order[i]};
    stamp[order[i]] = static_cast<int32_t>(i);
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      accepting |= s == final_node;
      for (const Edge& e : nfa.nodes[s].edges) edges.push_back(e);
      for (int32_t t : nfa.nodes[s].eps)
        if (stamp[t] != static_cast<int32_t>(i)) {
          stamp[t] = static_cast<int32_t>(i);
          stack.push_back(t);
        }
    }
    for (Edge& e : edges) {
      if (local[e.target] < 0) {
        local[e.target] = static_cast<int32_t>(order.size());
        order.push_back(e.target);
      }
      e.target = local[e.target];
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
      return std::tie(a.rule, a.lo, a.hi, a.target) < std::tie(b.rule, b.lo, b.hi, b.target);
    });
    edges.erase(std::unique(edges.begin(), edges.end(),
                            [](const Edge& a, const Edge& b) {
                              return a.rule == b.rule && a.lo == b.lo && a.hi == b.hi &&
                                     a.target == b.target;
                            }),
                edges.end());
    out.edges.push_back(std::move(edges));
    out.accepting.push_back(accepting);
  }
  return out;
}

// live[s]: some string (through `usable` rules) leads from s to an accepting state.
std::vector<bool> live_states(const std::vector<State>& states,
                              const std::vector<std::vector<Edge>>& edges,
                              const std::vector<bool>& usable) {
  std::vector<bool> live(states.size());
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = states.size(); s-- > 0;) {
      if (live[s]) continue;
      bool ok = states[s].accepting;
      for (const Edge& e : edges[s]) ok = ok || (live[e.target] && (e.rule < 0 || usable[e.rule]));
      if (ok) live[s] = changed = true;
    }
  }
  return live;
}

}  // namespace

GrammarBuilder::GrammarBuilder(GrammarLimits limits)
    : limits_(limits), start_seconds_(now_seconds()) {}

int32_t GrammarBuilder::declare(std::string name) {
  if (static_cast<int32_t>(names_.size()) >= limits_.max_rules)
    grammar_error("", "the grammar has more than {} rules", limits_.max_rules);
  names_.push_back(std::move(name));
  bodies_.push_back(nullptr);
  return static_cast<int32_t>(names_.size()) - 1;
}

void GrammarBuilder::define(int32_t rule, ExprPtr body) { bodies_.at(rule) = std::move(body); }

void GrammarBuilder::check_time() const {
  if (now_seconds() - start_seconds_ > limits_.max_compile_seconds)
    grammar_error("", "compiling the grammar took more than {} s", limits_.max_compile_seconds);
}

Grammar GrammarBuilder::build(int32_t root) const {
  Grammar g;
  std::vector<std::vector<Edge>> edges;  // per global state, global targets
  int64_t n_states = 0;
  for (size_t r = 0; r < bodies_.size(); ++r) {
    if (bodies_[r] == nullptr) grammar_error(names_[r], "rule '{}' is not defined", names_[r]);
    int32_t final_node = 0;
    Nfa nfa = RuleCompiler(*this, n_states).compile(*bodies_[r], final_node);
    RuleAutomaton automaton = remove_epsilons(nfa, final_node, *this);
    const auto base = static_cast<int32_t>(g.states_.size());
    g.rules_.push_back({names_[r], base, false});
    for (size_t s = 0; s < automaton.edges.size(); ++s) {
      for (Edge& e : automaton.edges[s]) e.target += base;
      g.states_.push_back({static_cast<int32_t>(r), 0, 0, automaton.accepting[s]});
      edges.push_back(std::move(automaton.edges[s]));
    }
  }
  check_time();
  // Rules that derive some string, then rules that derive the empty string.
  const size_t n_rules = g.rules_.size();
  std::vector<bool> productive(n_rules), nullable(n_rules);
  for (bool changed = true; changed;) {
    const std::vector<bool> live = live_states(g.states_, edges, productive);
    changed = false;
    for (size_t r = 0; r < n_rules; ++r)
      if (!productive[r] && live[g.rules_[r].start]) productive[r] = changed = true;
  }
  std::vector<std::vector<Edge>> null_edges(edges.size());
  for (size_t s = 0; s < edges.size(); ++s)
    for (const Edge& e : edges[s])
      if (e.rule >= 0) null_edges[s].push_back(e);
  for (bool changed = true; changed;) {
    const std::vector<bool> reach = live_states(g.states_, null_edges, nullable);
    changed = false;
    for (size_t r = 0; r < n_rules; ++r)
      if (!nullable[r] && reach[g.rules_[r].start]) nullable[r] = changed = true;
  }
  if (!productive.at(root))
    grammar_error(names_[root], "the grammar accepts no string (it is unsatisfiable)");
  const std::vector<bool> live = live_states(g.states_, edges, productive);
  for (size_t s = 0; s < edges.size(); ++s) {
    g.states_[s].edges_begin = static_cast<uint32_t>(g.edges_.size());
    for (const Edge& e : edges[s])
      if (live[e.target] && (e.rule < 0 || productive[e.rule])) g.edges_.push_back(e);
    g.states_[s].edges_end = static_cast<uint32_t>(g.edges_.size());
  }
  for (size_t r = 0; r < n_rules; ++r) g.rules_[r].nullable = nullable[r];
  g.root_ = root;
  for (const Edge& e : g.edges_) g.root_referenced_ |= e.rule == root;
  return g;
}

}  // namespace hadron::grammar
