// Matching bytes against a Grammar: an Earley recognizer over the rules' automata. Each byte
// makes one Earley set; rolling back pops sets, so trying a token and undoing it is cheap.
// A regex (one rule, no references) keeps at most one item per automaton state per set, so
// matching is linear in the input whatever the pattern.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace hadron::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> grammar);

  // Reads one byte; false (and no change) when no string of the grammar continues so.
  bool advance(uint8_t byte);
  // Reads all of `bytes` or, when some byte is refused, none of them.
  bool advance(std::string_view bytes);
  // Undoes the last `n` bytes read.
  void rollback(size_t n);
  size_t n_bytes() const { return set_starts_.size() - 1; }
  // True when the bytes read so far are a whole string of the grammar.
  bool can_end() const;
  // True when some byte may follow.
  bool can_continue() const;

 private:
  struct Item {
    int32_t state;
    int32_t origin;  // the set where the item's rule started
  };
  void add(int32_t state, int32_t origin);
  void close_newest_set();

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Item> items_;
  std::vector<uint32_t> set_starts_;  // set k: items_[set_starts_[k], set_starts_[k + 1])
  // Duplicate detection in the set being built: per state, the newest item with that state.
  std::vector<uint32_t> head_serial_;
  std::vector<int32_t> head_;
  std::vector<int32_t> next_same_state_;
  uint32_t serial_ = 0;
};

}  // namespace hadron::grammar
