// BlockAllocator: hands out KV-cache block ids from a free list.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace hadron {

class BlockAllocator {
 public:
  explicit BlockAllocator(int64_t n_blocks);

  // n block ids, or nullopt (and nothing taken) when fewer are free.
  std::optional<std::vector<int32_t>> allocate(int64_t n);
  void free(const std::vector<int32_t>& blocks);
  int64_t n_free() const { return static_cast<int64_t>(free_.size()); }
  int64_t n_blocks() const { return n_blocks_; }

 private:
  int64_t n_blocks_;
  std::vector<int32_t> free_;  // a stack: most recently freed first
  std::vector<bool> in_use_;
};

}  // namespace hadron
