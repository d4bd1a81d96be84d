#include "kv/block_allocator.h"

#include "core/error.h"

namespace hadron {

BlockAllocator::BlockAllocator(int64_t n_blocks) : n_blocks_(n_blocks), in_use_(n_blocks) {
  for (int64_t i = n_blocks - 1; i >= 0; --i) free_.push_back(static_cast<int32_t>(i));
}

std::optional<std::vector<int32_t>> BlockAllocator::allocate(int64_t n) {
  if (n > n_free()) return std::nullopt;
  std::vector<int32_t> blocks(free_.end() - n, free_.end());
  free_.resize(free_.size() - n);
  for (int32_t block : blocks) in_use_[block] = true;
  return blocks;
}

void BlockAllocator::free(const std::vector<int32_t>& blocks) {
  for (int32_t block : blocks) {
    HADRON_CHECK(block >= 0 && block < n_blocks_ && in_use_[block], "double free of block {}",
                 block);
    in_use_[block] = false;
    free_.push_back(block);
  }
}

}  // namespace hadron
