#include "kv/state_snapshots.h"

#include "core/error.h"

namespace hadron {

StateSnapshots::StateSnapshots(int64_t n_snapshots, int32_t first_row)
    : first_row_(first_row), entries_(n_snapshots) {
  for (int64_t i = 0; i < n_snapshots; ++i)
    entries_[i].lru_position = lru_.insert(lru_.end(), first_row + static_cast<int32_t>(i));
}

StateSnapshots::Entry& StateSnapshots::entry(int32_t row) {
  HADRON_CHECK(row >= first_row_ && row - first_row_ < n_snapshots(),
               "state row {} is not a snapshot (rows {} to {})", row, first_row_,
               first_row_ + n_snapshots() - 1);
  return entries_[row - first_row_];
}

void StateSnapshots::touch(int32_t row) {
  Entry& e = entry(row);
  lru_.splice(lru_.end(), lru_, e.lru_position);
}

std::optional<int32_t> StateSnapshots::acquire(uint64_t key) {
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  Entry& e = entry(it->second);
  if (e.ref_count++ == 0) {
    lru_.erase(e.lru_position);
    ++n_referenced_;
  }
  return it->second;
}

void StateSnapshots::release(int32_t row) {
  Entry& e = entry(row);
  HADRON_CHECK(e.ref_count > 0, "snapshot row {} released more often than acquired", row);
  if (--e.ref_count > 0) return;
  e.lru_position = lru_.insert(lru_.end(), row);  // just used: evicted last
  --n_referenced_;
}

std::optional<int32_t> StateSnapshots::store(uint64_t key) {
  if (const auto it = by_key_.find(key); it != by_key_.end()) {
    if (entry(it->second).ref_count == 0) touch(it->second);
    return std::nullopt;
  }
  if (lru_.empty()) return std::nullopt;
  const int32_t row = lru_.front();
  Entry& e = entry(row);
  if (e.stored) by_key_.erase(e.key);
  e.stored = true;
  e.key = key;
  by_key_[key] = row;
  touch(row);
  return row;
}

}  // namespace hadron
