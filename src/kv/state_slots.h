// StateSlots: which per-sequence linear-attention state slots (KvCache::conv_state /
// recurrent_state) are free. A running sequence of a hybrid model holds one; preemption,
// abort and finishing give it back (its state is recomputed from position 0 if it runs again).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace hadron {

class StateSlots {
 public:
  // n_slots 0: the model keeps no per-sequence state.
  explicit StateSlots(int64_t n_slots = 0);

  bool enabled() const { return n_slots_ > 0; }
  int64_t n_slots() const { return n_slots_; }
  int64_t n_free() const { return static_cast<int64_t>(free_.size()); }
  // A free slot, or nullopt when all are taken.
  std::optional<int32_t> acquire();
  // Gives a slot back; -1 (none held) is ignored.
  void release(int32_t slot);

 private:
  int64_t n_slots_;
  std::vector<int32_t> free_;  // back: handed out next
  std::vector<bool> taken_;
};

}  // namespace hadron
