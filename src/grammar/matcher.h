// Matching bytes against a Grammar: an Earley recognizer over the rules' automata. Each byte
// makes one Earley set; rolling back pops sets, so trying a token and undoing it is cheap.
// A regex (one rule, no references) keeps at most one item per automaton state per set, so
// matching is linear in the input whatever the pattern.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace hadron::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> grammar);
  // The newest set of `from` alone: items that began before it keep one opaque origin, and a
  // completion into it marks the set as escaped (its result needs the context) instead of
  // being done. Two matchers with the same signature() have equal views.
  static Matcher view_of_newest_set(const Matcher& from);
  // The newest set's items as (state, began before it) pairs, sorted and unique.
  std::vector<uint64_t> signature() const;
  // The newest set's items that have edges as sorted (state, origin) keys, each earlier origin
  // named by set_ids[origin], then the escaped flag: two views reached by different bytes whose
  // keys are equal (under ids that name equal sets alike) read every later byte alike.
  void newest_set_key(std::span<const int32_t> set_ids, std::vector<uint64_t>& out) const;
  // True when reading the bytes since the view was taken completed into the context.
  bool escaped() const { return escaped_.back() != 0; }

  // Reads one byte; false (and no change) when no string of the grammar continues so.
  bool advance(uint8_t byte);
  // Reads all of `bytes` or, when some byte is refused, none of them.
  bool advance(std::string_view bytes);
  // Undoes the last `n` bytes read.
  void rollback(size_t n);
  size_t n_bytes() const { return set_starts_.size() - 1; }
  // Earley items held for all sets: the matcher's work and memory.
  size_t n_items() const { return items_.size(); }
  // True when the bytes read so far are a whole string of the grammar.
  bool can_end() const;
  // True when some byte may follow.
  bool can_continue() const;

 private:
  struct Item {
    int32_t state;
    int32_t origin;  // the set where the item's rule started
  };
  static constexpr int32_t kContext = -1;  // the opaque origin of a view
  static constexpr int32_t kNowhere = -2;  // a view's root item: completing it does nothing
  Matcher() = default;
  void init_dedup();
  void add(int32_t state, int32_t origin);
  void close_newest_set();

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Item> items_;
  std::vector<uint32_t> set_starts_;  // set k: items_[set_starts_[k], set_starts_[k + 1])
  std::vector<uint8_t> escaped_;      // per set: a completion into kContext happened by then
  // Duplicate detection in the set being built: per state, the newest item with that state.
  std::vector<uint32_t> head_serial_;
  std::vector<int32_t> head_;
  std::vector<int32_t> next_same_state_;
  uint32_t serial_ = 0;
};

}  // namespace hadron::grammar
