#include "kv/state_snapshots.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "kv/block_manager.h"

namespace hadron {
namespace {

TEST(StateSnapshots, StoresInFreeRowsThenEvictsTheLeastRecentlyUsed) {
  StateSnapshots snapshots(3, 8);  // rows 8, 9, 10 after 8 sequence slots
  EXPECT_EQ(snapshots.store(101), 8);
  EXPECT_EQ(snapshots.store(102), 9);
  EXPECT_EQ(snapshots.store(101), std::nullopt);  // stored already: now the most recent
  EXPECT_EQ(snapshots.store(103), 10);
  EXPECT_EQ(snapshots.n_stored(), 3);
  EXPECT_EQ(snapshots.store(104), 9);  // 102 was used least recently
  EXPECT_FALSE(snapshots.contains(102));
  EXPECT_TRUE(snapshots.contains(101) && snapshots.contains(103) && snapshots.contains(104));
  EXPECT_EQ(snapshots.n_stored(), 3);
}

TEST(StateSnapshots, AReferencePinsASnapshot) {
  StateSnapshots snapshots(2, 0);
  snapshots.store(1);
  snapshots.store(2);
  EXPECT_EQ(snapshots.acquire(1), 0);
  EXPECT_EQ(snapshots.acquire(1), 0);
  EXPECT_EQ(snapshots.acquire(7), std::nullopt);
  EXPECT_EQ(snapshots.n_referenced(), 1);
  EXPECT_EQ(snapshots.store(3), 1);  // key 1 is pinned, so key 2 goes
  EXPECT_EQ(snapshots.acquire(3), 1);
  EXPECT_EQ(snapshots.store(4), std::nullopt);  // every row is pinned
  EXPECT_EQ(snapshots.n_referenced(), 2);
  snapshots.release(1);  // key 3 unpinned first
  snapshots.release(0);
  EXPECT_EQ(snapshots.n_referenced(), 1);
  snapshots.release(0);
  EXPECT_EQ(snapshots.n_referenced(), 0);
  EXPECT_THROW(snapshots.release(0), Error);
  EXPECT_THROW(snapshots.release(5), Error);  // not a snapshot row
  EXPECT_EQ(snapshots.store(5), 1);           // key 3 was released before key 1
  EXPECT_TRUE(snapshots.contains(1));
  EXPECT_FALSE(snapshots.contains(3));
}

TEST(StateSnapshots, NoneKept) {
  StateSnapshots snapshots;
  EXPECT_FALSE(snapshots.enabled());
  EXPECT_EQ(snapshots.store(1), std::nullopt);
}

TEST(BlockManager, TrimPrefixReleasesTheTailAndCountsOnlyWhatIsKept) {
  BlockManager manager(8, 4, true);
  std::vector<int32_t> tokens(13);
  for (int i = 0; i < 13; ++i) tokens[i] = i;
  auto blocks = *manager.allocate(4);
  BlockHashCursor cursor;
  manager.cache_full_blocks(blocks, tokens, 0, cursor);
  manager.release(blocks);
  PrefixMatch match = manager.acquire_prefix(tokens, 0, 12);
  ASSERT_EQ(match.blocks.size(), 3u);
  ASSERT_EQ(match.hashes.size(), 3u);
  EXPECT_EQ(match.hashes.back(), match.cursor.parent);
  manager.trim_prefix(match, 1);
  EXPECT_EQ(match.n_tokens, 4);
  EXPECT_EQ(match.cursor.n_hashed, 1);
  EXPECT_EQ(match.cursor.parent, match.hashes[0]);
  EXPECT_EQ(manager.stats().hit_tokens, 4);
  EXPECT_EQ(manager.n_free(), 7);
  manager.trim_prefix(match, 0);
  EXPECT_EQ(match.cursor.n_hashed, 0);
  EXPECT_EQ(manager.n_free(), 8);
  EXPECT_EQ(manager.stats().hit_tokens, 0);
}

}  // namespace
}  // namespace hadron
