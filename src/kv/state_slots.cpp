#include "kv/state_slots.h"

#include "core/error.h"

namespace hadron {

StateSlots::StateSlots(int64_t n_slots) : n_slots_(n_slots), taken_(n_slots, false) {
  for (int64_t slot = n_slots - 1; slot >= 0; --slot) free_.push_back(static_cast<int32_t>(slot));
}

std::optional<int32_t> StateSlots::acquire() {
  if (free_.empty()) return std::nullopt;
  const int32_t slot = free_.back();
  free_.pop_back();
  taken_[slot] = true;
  return slot;
}

void StateSlots::release(int32_t slot) {
  if (slot < 0) return;
  HADRON_CHECK(slot < n_slots_ && taken_[slot], "state slot {} released but not held", slot);
  taken_[slot] = false;
  free_.push_back(slot);
}

}  // namespace hadron
