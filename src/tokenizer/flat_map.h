// Open-addressing hash tables for the BPE hot paths: merges keyed by a token-id pair and
// vocabularies keyed by a byte string. Both are built once and then only read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hadron::tok {

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

inline uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w = 0;
    for (int b = 0; b < 8; ++b)
      w |= static_cast<uint64_t>(static_cast<unsigned char>(s[i + b])) << (8 * b);
    h = mix64(h ^ w);
  }
  uint64_t w = 0;
  for (int b = 0; i < s.size(); ++i, ++b)
    w |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * b);
  return mix64(h ^ w);
}

// uint64 key -> uint64 value. The key ~0 is reserved as "empty".
class PairMap {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  explicit PairMap(size_t expected = 0) { rehash(expected); }

  // Inserts or overwrites.
  void put(uint64_t key, uint64_t value);
  const uint64_t* find(uint64_t key) const {
    size_t i = mix64(key) & mask_;
    while (true) {
      const Slot& slot = slots_[i];
      if (slot.key == key) return &slot.value;
      if (slot.key == kEmpty) return nullptr;
      i = (i + 1) & mask_;
    }
  }
  size_t size() const { return n_; }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    uint64_t value = 0;
  };
  void rehash(size_t expected);

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t n_ = 0;
};

// byte string -> int32 id. Keys are stored in one arena.
class StringMap {
 public:
  // Returns false (and keeps the first value) when the key is already present.
  bool insert(std::string_view key, int32_t value);
  // Inserts or overwrites.
  void put(std::string_view key, int32_t value);
  std::optional<int32_t> find(std::string_view key) const;
  size_t size() const { return n_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t length = 0;
    int32_t value = -1;  // -1: empty
  };
  Slot* lookup(std::string_view key, uint64_t hash);
  const Slot* lookup(std::string_view key, uint64_t hash) const;
  void grow();

  std::vector<Slot> slots_ = std::vector<Slot>(16);
  std::string arena_;
  size_t n_ = 0;
};

}  // namespace hadron::tok
