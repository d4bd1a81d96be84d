#include "tokenizer/flat_map.h"

#include "core/error.h"

namespace hadron::tok {

void PairMap::rehash(size_t expected) {
  size_t capacity = 16;
  while (capacity < expected * 2) capacity *= 2;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  n_ = 0;
  for (const Slot& slot : old) {
    if (slot.key != kEmpty) put(slot.key, slot.value);
  }
}

void PairMap::put(uint64_t key, uint64_t value) {
  HADRON_CHECK(key != kEmpty, "PairMap key {} is reserved", key);
  if ((n_ + 1) * 2 > slots_.size()) rehash(n_ + 1);
  size_t i = mix64(key) & mask_;
  while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
  if (slots_[i].key == kEmpty) ++n_;
  slots_[i] = Slot{key, value};
}

const StringMap::Slot* StringMap::lookup(std::string_view key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (true) {
    const Slot& slot = slots_[i];
    if (slot.value < 0) return &slot;
    if (slot.hash == hash && slot.length == key.size() &&
        std::string_view(arena_).substr(slot.offset, slot.length) == key) {
      return &slot;
    }
    i = (i + 1) & mask;
  }
}

StringMap::Slot* StringMap::lookup(std::string_view key, uint64_t hash) {
  return const_cast<Slot*>(static_cast<const StringMap*>(this)->lookup(key, hash));
}

void StringMap::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.value < 0) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].value >= 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

bool StringMap::insert(std::string_view key, int32_t value) {
  HADRON_CHECK(value >= 0, "StringMap values must be ids, got {}", value);
  if ((n_ + 1) * 2 > slots_.size()) grow();
  const uint64_t hash = hash_bytes(key);
  Slot* slot = lookup(key, hash);
  if (slot->value >= 0) return false;
  *slot =
      Slot{hash, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()), value};
  arena_.append(key);
  ++n_;
  return true;
}

void StringMap::put(std::string_view key, int32_t value) {
  if (!insert(key, value)) lookup(key, hash_bytes(key))->value = value;
}

std::optional<int32_t> StringMap::find(std::string_view key) const {
  const Slot* slot = lookup(key, hash_bytes(key));
  if (slot->value < 0) return std::nullopt;
  return slot->value;
}

}  // namespace hadron::tok
