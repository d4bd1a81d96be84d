#include "grammar/matcher.h"

#include <algorithm>

namespace hadron::grammar {

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  init_dedup();
  set_starts_ = {0};
  escaped_ = {0};
  add(grammar_->rules()[grammar_->root()].start, 0);
  close_newest_set();
}

void Matcher::init_dedup() {
  const size_t n_states = grammar_->states().size();
  head_serial_.assign(n_states, 0);
  head_.assign(n_states, -1);
  ++serial_;
}

Matcher Matcher::view_of_newest_set(const Matcher& from) {
  Matcher view;
  view.grammar_ = from.grammar_;
  view.init_dedup();
  view.set_starts_ = {0};
  view.escaped_ = {0};
  const auto newest = static_cast<int32_t>(from.set_starts_.size()) - 1;
  const Grammar& g = *from.grammar_;
  for (size_t i = from.set_starts_.back(); i < from.items_.size(); ++i) {
    const Item item = from.items_[i];
    int32_t origin = item.origin == newest ? 0 : kContext;
    // A root item from the start completes into nothing unless the root is referenced.
    if (origin == kContext && item.origin == 0 && g.states()[item.state].rule == g.root() &&
        !g.root_referenced())
      origin = kNowhere;
    view.add(item.state, origin);
  }
  return view;
}

std::vector<uint64_t> Matcher::signature() const {
  std::vector<uint64_t> out;
  const auto newest = static_cast<int32_t>(set_starts_.size()) - 1;
  for (size_t i = set_starts_.back(); i < items_.size(); ++i)
    out.push_back(static_cast<uint64_t>(items_[i].state) << 2 | (items_[i].origin == newest ? 0
                                                                 : items_[i].origin == 0    ? 1
                                                                                            : 2));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Matcher::newest_set_key(std::span<const int32_t> set_ids, std::vector<uint64_t>& out) const {
  out.clear();
  const auto newest = static_cast<int32_t>(set_starts_.size()) - 1;
  const std::vector<State>& states = grammar_->states();
  for (size_t i = set_starts_.back(); i < items_.size(); ++i) {
    // An item with no edge did its work (its completion) when the set closed.
    const State& state = states[items_[i].state];
    if (state.edges_begin == state.edges_end) continue;
    const int32_t origin = items_[i].origin;
    const uint64_t code = origin == newest     ? 0
                          : origin == kContext ? 1
                          : origin == kNowhere ? 2
                                               : 3 + static_cast<uint64_t>(set_ids[origin]);
    out.push_back(static_cast<uint64_t>(items_[i].state) << 32 | code);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.push_back(escaped_.back());
}

void Matcher::add(int32_t state, int32_t origin) {
  if (head_serial_[state] == serial_) {
    for (int32_t i = head_[state]; i >= 0; i = next_same_state_[i])
      if (items_[i].origin == origin) return;
  } else {
    head_serial_[state] = serial_;
    head_[state] = -1;
  }
  next_same_state_.resize(items_.size() + 1);
  next_same_state_[items_.size()] = head_[state];
  head_[state] = static_cast<int32_t>(items_.size());
  items_.push_back({state, origin});
}

void Matcher::close_newest_set() {
  const auto k = static_cast<int32_t>(set_starts_.size()) - 1;
  const std::vector<State>& states = grammar_->states();
  const std::vector<Edge>& edges = grammar_->edges();
  const std::vector<Rule>& rules = grammar_->rules();
  for (size_t i = set_starts_.back(); i < items_.size(); ++i) {
    const Item item = items_[i];
    const State& state = states[item.state];
    for (uint32_t e = state.edges_begin; e < state.edges_end; ++e) {
      const Edge& edge = edges[e];
      if (edge.rule < 0) continue;
      const Rule& sub = rules[edge.rule];
      add(sub.start, k);
      if (sub.nullable) add(edge.target, item.origin);
    }
    if (!state.accepting || item.origin == k) continue;  // empty completions: nullable above
    if (item.origin < 0) {
      escaped_.back() |= item.origin == kContext;
      continue;
    }
    const uint32_t end = set_starts_[item.origin + 1];
    for (uint32_t j = set_starts_[item.origin]; j < end; ++j) {
      const Item parent = items_[j];
      const State& ps = states[parent.state];
      for (uint32_t e = ps.edges_begin; e < ps.edges_end; ++e)
        if (edges[e].rule == state.rule) add(edges[e].target, parent.origin);
    }
  }
}

bool Matcher::advance(uint8_t byte) {
  const uint32_t begin = set_starts_.back();
  const auto end = static_cast<uint32_t>(items_.size());
  ++serial_;
  const std::vector<State>& states = grammar_->states();
  const std::vector<Edge>& edges = grammar_->edges();
  set_starts_.push_back(end);
  escaped_.push_back(escaped_.back());
  for (uint32_t i = begin; i < end; ++i) {
    const Item item = items_[i];
    const State& state = states[item.state];
    for (uint32_t e = state.edges_begin; e < state.edges_end; ++e) {
      const Edge& edge = edges[e];
      if (edge.rule >= 0) break;  // byte edges sort first
      if (byte >= edge.lo && byte <= edge.hi) add(edge.target, item.origin);
    }
  }
  if (items_.size() == end) {
    set_starts_.pop_back();
    escaped_.pop_back();
    return false;
  }
  close_newest_set();
  return true;
}

bool Matcher::advance(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!advance(static_cast<uint8_t>(bytes[i]))) {
      rollback(i);
      return false;
    }
  }
  return true;
}

void Matcher::rollback(size_t n) {
  if (n == 0) return;
  const size_t n_sets = set_starts_.size() - n;
  items_.resize(set_starts_[n_sets]);
  set_starts_.resize(n_sets);
  escaped_.resize(n_sets);
}

bool Matcher::can_end() const {
  const std::vector<State>& states = grammar_->states();
  const int32_t root = grammar_->root();
  for (size_t i = set_starts_.back(); i < items_.size(); ++i) {
    const State& s = states[items_[i].state];
    if (s.accepting && s.rule == root && items_[i].origin == 0) return true;
  }
  return false;
}

bool Matcher::can_continue() const {
  const std::vector<State>& states = grammar_->states();
  const std::vector<Edge>& edges = grammar_->edges();
  for (size_t i = set_starts_.back(); i < items_.size(); ++i) {
    const State& s = states[items_[i].state];
    if (s.edges_begin < s.edges_end && edges[s.edges_begin].rule < 0) return true;
  }
  return false;
}

}  // namespace hadron::grammar
