// StateSnapshots: which rows of the linear-attention state tensors (KvCache::conv_state /
// recurrent_state, rows [first_row, first_row + n_snapshots), after the sequences' slots) hold
// a snapshot: every linear layer's conv and recurrent state of one sequence at one block
// boundary. A snapshot is keyed by the prefix cache's chain hash of the full block it ends at,
// so a cached prefix of a hybrid model is usable up to the longest boundary with a snapshot
// (ADR 0011). Unreferenced snapshots are evicted least recently used first; a reference pins
// one while its copy into a sequence's slot is pending.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace hadron {

// One state copy between rows of the state tensors (KvCache::copy_state).
struct StateCopy {
  int32_t src = -1;
  int32_t dst = -1;
};

class StateSnapshots {
 public:
  // n_snapshots 0: none are kept (hybrid prefix caching off).
  explicit StateSnapshots(int64_t n_snapshots = 0, int32_t first_row = 0);

  bool enabled() const { return !entries_.empty(); }
  int64_t n_snapshots() const { return static_cast<int64_t>(entries_.size()); }
  // Rows holding a snapshot, and rows pinned by a reference.
  int64_t n_stored() const { return static_cast<int64_t>(by_key_.size()); }
  int64_t n_referenced() const { return n_referenced_; }
  bool contains(uint64_t key) const { return by_key_.contains(key); }

  // The row of key's snapshot, with one more reference (it is not evicted until released),
  // or nullopt.
  std::optional<int32_t> acquire(uint64_t key);
  void release(int32_t row);
  // A row to copy a new snapshot of key into (a free one, else the least recently used
  // unreferenced one, evicted), or nullopt when key is stored already (then marked recently
  // used) or every row is referenced.
  std::optional<int32_t> store(uint64_t key);

 private:
  struct Entry {
    bool stored = false;
    uint64_t key = 0;
    int32_t ref_count = 0;
    std::list<int32_t>::iterator lru_position;  // while unreferenced
  };

  Entry& entry(int32_t row);
  void touch(int32_t row);  // to the back of the LRU list (unreferenced rows only)

  int32_t first_row_;
  std::vector<Entry> entries_;                    // by row - first_row
  std::list<int32_t> lru_;                        // unreferenced rows; front: reused first
  std::unordered_map<uint64_t, int32_t> by_key_;  // stored snapshots' rows
  int64_t n_referenced_ = 0;
};

}  // namespace hadron
