#include "kv/block_manager.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <set>

#include "core/error.h"

namespace hadron {
namespace {

std::vector<int32_t> iota_tokens(int n, int32_t start = 0) {
  std::vector<int32_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), start);
  return tokens;
}

TEST(BlockManager, AllocatesDistinctBlocksAndRefusesWhenFull) {
  BlockManager manager(10, 4, true);
  auto a = manager.allocate(4), b = manager.allocate(6);
  ASSERT_TRUE(a && b);
  std::set<int32_t> all(a->begin(), a->end());
  all.insert(b->begin(), b->end());
  EXPECT_EQ(all.size(), 10u);
  EXPECT_FALSE(manager.allocate(1));
  manager.release(*a);
  EXPECT_EQ(manager.n_free(), 4);
  EXPECT_THROW(manager.release(*a), Error);  // released twice
  EXPECT_TRUE(manager.allocate(4));
}

TEST(BlockManager, PrefixHitsReuseFullBlocksOnly) {
  BlockManager manager(16, 4, true);
  const std::vector<int32_t> tokens = iota_tokens(10);  // 2 full blocks + 2 tokens
  auto blocks = *manager.allocate(3);
  BlockHashCursor cursor;
  manager.cache_full_blocks(blocks, tokens, 0, cursor);
  manager.release(blocks);

  const PrefixMatch hit = manager.acquire_prefix(tokens, 0, 100);
  EXPECT_EQ(hit.n_tokens, 8);
  EXPECT_EQ(hit.blocks, (std::vector<int32_t>{blocks[0], blocks[1]}));
  EXPECT_EQ(manager.ref_count(blocks[0]), 1);
  // A different salt (e.g. other sampling-independent KV inputs) or first token misses.
  EXPECT_EQ(manager.acquire_prefix(tokens, 7, 100).n_tokens, 0);
  EXPECT_EQ(manager.acquire_prefix(iota_tokens(10, 1), 0, 100).n_tokens, 0);
  // max_tokens caps the match (the last prompt token must always be recomputed).
  const PrefixMatch capped = manager.acquire_prefix(tokens, 0, 7);
  EXPECT_EQ(capped.n_tokens, 4);
  EXPECT_EQ(manager.ref_count(blocks[0]), 2);
  EXPECT_EQ(manager.stats().hit_tokens, 12);
}

TEST(BlockManager, EvictsLeastRecentlyUsedCachedBlocks) {
  BlockManager manager(4, 2, true);
  const std::vector<int32_t> first = {1, 2, 3, 4}, second = {5, 6, 7, 8};
  auto a = *manager.allocate(2);
  BlockHashCursor cursor_a;
  manager.cache_full_blocks(a, first, 0, cursor_a);
  manager.release(a);
  auto b = *manager.allocate(2);  // the two never-used blocks come first
  BlockHashCursor cursor_b;
  manager.cache_full_blocks(b, second, 0, cursor_b);
  manager.release(b);
  EXPECT_EQ(manager.acquire_prefix(first, 0, 4).n_tokens, 4);
  manager.release(manager.acquire_prefix(first, 0, 4).blocks);
  manager.release(manager.acquire_prefix(first, 0, 4).blocks);
  // Taking 2 fresh blocks now must evict one of the cached sequences, not crash.
  auto c = manager.allocate(2);
  ASSERT_TRUE(c);
  EXPECT_EQ(manager.n_free(), 0);
}

TEST(BlockManager, RandomOperationsNeverLeakBlocks) {
  std::mt19937 rng(3);
  BlockManager manager(64, 4, true);
  std::vector<std::vector<int32_t>> held;
  for (int step = 0; step < 5000; ++step) {
    const int action = rng() % 3;
    if (action == 0) {
      const std::vector<int32_t> tokens = iota_tokens(4 + rng() % 20, rng() % 3);
      PrefixMatch match = manager.acquire_prefix(tokens, 0, tokens.size() - 1);
      const int64_t need = (tokens.size() + 3) / 4 - match.blocks.size();
      if (auto fresh = manager.allocate(need)) {
        match.blocks.insert(match.blocks.end(), fresh->begin(), fresh->end());
        manager.cache_full_blocks(match.blocks, tokens, 0, match.cursor);
        held.push_back(match.blocks);
      } else {
        manager.release(match.blocks);
      }
    } else if (!held.empty()) {
      const size_t victim = rng() % held.size();
      manager.release(held[victim]);
      held.erase(held.begin() + victim);
    }
  }
  for (const auto& blocks : held) manager.release(blocks);
  EXPECT_EQ(manager.n_free(), 64);
  for (int32_t b = 0; b < 64; ++b) EXPECT_EQ(manager.ref_count(b), 0);
}

}  // namespace
}  // namespace hadron
