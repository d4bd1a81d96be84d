// BlockManager: KV-cache blocks with reference counts and a prefix cache.
//
// A full block is identified by a chained hash of (parent block's hash, its tokens, a salt
// for anything else that changes its KV). Blocks whose reference count drops to zero go to
// a least-recently-used free list but keep their cached contents until the block is handed out
// again, so a later request with the same prefix can take them back.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace hadron {

// Where a sequence's chain of full-block hashes stands, so each step hashes only the blocks
// that became full since the last one.
struct BlockHashCursor {
  int64_t n_hashed = 0;  // leading full blocks already hashed (and offered to the cache)
  uint64_t parent = 0;   // hash of the last of them
};

struct PrefixMatch {
  std::vector<int32_t> blocks;   // cached blocks covering the prefix, in order
  int64_t n_tokens = 0;          // tokens they hold (a multiple of block_size)
  BlockHashCursor cursor;        // the hash chain after the matched blocks
  std::vector<uint64_t> hashes;  // the chain hash of each matched block
};

struct PrefixCacheStats {
  int64_t queried_tokens = 0;
  int64_t hit_tokens = 0;
};

class BlockManager {
 public:
  BlockManager(int64_t n_blocks, int64_t block_size, bool enable_prefix_caching);

  int64_t n_blocks() const { return static_cast<int64_t>(blocks_.size()); }
  int64_t block_size() const { return block_size_; }
  // Blocks that allocate() can hand out now (free, cached or not).
  int64_t n_free() const { return static_cast<int64_t>(free_list_.size()); }
  double usage() const { return 1.0 - static_cast<double>(n_free()) / n_blocks(); }
  const PrefixCacheStats& stats() const { return stats_; }

  // The longest run of cached full blocks matching `tokens` from the start. At most
  // `max_tokens` tokens are matched. Takes a reference on each returned block.
  PrefixMatch acquire_prefix(std::span<const int32_t> tokens, uint64_t salt, int64_t max_tokens);
  // Keeps the first n_blocks of match (a hybrid model's prefix, cut at its longest state
  // snapshot) and releases the rest; the hit statistics count only what is kept.
  void trim_prefix(PrefixMatch& match, int64_t n_blocks);
  // n fresh blocks (evicting the least recently used cached ones), or nullopt.
  std::optional<std::vector<int32_t>> allocate(int64_t n);
  // Takes one more reference on each block (sequences sharing a prompt's blocks).
  void share(std::span<const int32_t> blocks);
  // Drops one reference from each block; the last reference frees it (LRU, cache kept).
  void release(std::span<const int32_t> blocks);
  // Registers the blocks of `tokens` that became full since `cursor` in the prefix cache
  // and advances the cursor. `blocks` are the sequence's blocks.
  void cache_full_blocks(std::span<const int32_t> blocks, std::span<const int32_t> tokens,
                         uint64_t salt, BlockHashCursor& cursor);

  int32_t ref_count(int32_t block) const { return blocks_[block].ref_count; }

 private:
  struct Block {
    int32_t ref_count = 0;
    bool cached = false;
    uint64_t hash = 0;
    std::vector<int32_t> tokens;  // a cached block's tokens, to rule out hash collisions
    std::list<int32_t>::iterator free_position;
  };

  uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens, uint64_t salt) const;
  void uncache(int32_t block);
  void take(int32_t block);

  int64_t block_size_;
  bool prefix_caching_;
  std::vector<Block> blocks_;
  std::list<int32_t> free_list_;  // front: evicted first
  std::unordered_map<uint64_t, int32_t> cache_;
  PrefixCacheStats stats_;
};

}  // namespace hadron
