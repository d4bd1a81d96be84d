// The host-memory tier of the KV offload: a slab of fixed-size slots (pinned on CUDA) holding
// copies of evicted prefix-cache blocks, keyed by their hash-chain key, least recently used
// first out. Slots are kRecordAlign-aligned and padded so the disk tier reads and writes them
// with O_DIRECT. Pinned entries (a lookup in progress) are never chosen for eviction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/buffer.h"
#include "ops/backend.h"

namespace hadron {

class HostTier {
 public:
  struct Entry {
    uint64_t key = 0;
    std::vector<int32_t> tokens;
    int32_t slot = -1;
    int pins = 0;
    std::list<uint64_t>::iterator lru;
  };

  // n_slots slots for blocks of block_bytes, from backend.allocate_host.
  HostTier(Backend& backend, size_t block_bytes, int64_t n_slots);

  int64_t n_slots() const { return static_cast<int64_t>(n_slots_); }
  int64_t n_entries() const { return static_cast<int64_t>(entries_.size()); }
  size_t block_bytes() const { return block_bytes_; }
  // Bytes between slots: block_bytes rounded up to kRecordAlign (the padding is zero).
  size_t slot_bytes() const { return slot_bytes_; }
  std::byte* slot(int32_t slot) const { return base_ + static_cast<size_t>(slot) * slot_bytes_; }

  // The entry of key holding these tokens, or null.
  Entry* find(uint64_t key, std::span<const int32_t> tokens);
  // The entry of key whatever its tokens, or null.
  Entry* entry(uint64_t key);
  // Marks the entry most recently used.
  void touch(Entry& entry);
  // A new entry in a free slot (replacing another of the same key), or null when none is free.
  Entry* insert(uint64_t key, std::span<const int32_t> tokens);
  void erase(uint64_t key);
  // Keys of the least recently used unpinned entries to evict so that n more entries fit.
  std::vector<uint64_t> victims(int64_t n) const;
  void pin(Entry& entry) { ++entry.pins; }
  void unpin(uint64_t key);

 private:
  size_t block_bytes_;
  size_t slot_bytes_;
  size_t n_slots_;
  Buffer storage_;
  std::byte* base_ = nullptr;
  std::vector<int32_t> free_slots_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> lru_;  // front: evicted first
};

}  // namespace hadron
