#include "kv/offload_host_tier.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kv/offload_record.h"

namespace hadron {

HostTier::HostTier(Backend& backend, size_t block_bytes, int64_t n_slots)
    : block_bytes_(block_bytes),
      slot_bytes_(round_up_to(block_bytes, kRecordAlign)),
      n_slots_(static_cast<size_t>(n_slots)) {
  HADRON_CHECK(block_bytes > 0 && n_slots > 0, "host tier of {} slots of {} bytes", n_slots,
               block_bytes);
  storage_ = backend.allocate_host(n_slots_ * slot_bytes_ + kRecordAlign);
  const auto address = reinterpret_cast<uintptr_t>(storage_.data());
  base_ = static_cast<std::byte*>(storage_.data()) + (round_up_to(address, kRecordAlign) - address);
  for (size_t i = 0; i < n_slots_; ++i)  // the padding goes to disk: zero, not stale memory
    std::memset(slot(static_cast<int32_t>(i)) + block_bytes_, 0, slot_bytes_ - block_bytes_);
  for (auto i = static_cast<int32_t>(n_slots_); i-- > 0;) free_slots_.push_back(i);
}

HostTier::Entry* HostTier::find(uint64_t key, std::span<const int32_t> tokens) {
  const auto it = entries_.find(key);
  if (it == entries_.end() ||
      !std::equal(tokens.begin(), tokens.end(), it->second.tokens.begin(), it->second.tokens.end()))
    return nullptr;
  return &it->second;
}

HostTier::Entry* HostTier::entry(uint64_t key) {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void HostTier::touch(Entry& entry) { lru_.splice(lru_.end(), lru_, entry.lru); }

HostTier::Entry* HostTier::insert(uint64_t key, std::span<const int32_t> tokens) {
  if (const auto it = entries_.find(key); it != entries_.end() && it->second.pins > 0)
    return nullptr;
  erase(key);
  if (free_slots_.empty()) return nullptr;
  Entry& entry = entries_[key];
  entry.key = key;
  entry.tokens.assign(tokens.begin(), tokens.end());
  entry.slot = free_slots_.back();
  free_slots_.pop_back();
  entry.lru = lru_.insert(lru_.end(), key);
  return &entry;
}

void HostTier::erase(uint64_t key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return;
  HADRON_CHECK(it->second.pins == 0, "erasing pinned host entry {:016x}", key);
  free_slots_.push_back(it->second.slot);
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

std::vector<uint64_t> HostTier::victims(int64_t n) const {
  std::vector<uint64_t> keys;
  auto needed = n - static_cast<int64_t>(free_slots_.size());
  for (auto it = lru_.begin(); needed > 0 && it != lru_.end(); ++it) {
    if (entries_.at(*it).pins > 0) continue;
    keys.push_back(*it);
    --needed;
  }
  return keys;
}

void HostTier::unpin(uint64_t key) {
  const auto it = entries_.find(key);
  if (it != entries_.end() && it->second.pins > 0) --it->second.pins;
}

}  // namespace hadron
