#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "kv/block_allocator.h"

namespace hadron {
namespace {

TEST(BlockAllocator, AllocatesDistinctBlocksAndRefusesWhenFull) {
  BlockAllocator allocator(10);
  auto a = allocator.allocate(4), b = allocator.allocate(6);
  ASSERT_TRUE(a && b);
  std::set<int32_t> all(a->begin(), a->end());
  all.insert(b->begin(), b->end());
  EXPECT_EQ(all.size(), 10u);
  EXPECT_FALSE(allocator.allocate(1));
  allocator.free(*a);
  EXPECT_EQ(allocator.n_free(), 4);
  EXPECT_THROW(allocator.free(*a), Error);  // double free
  EXPECT_TRUE(allocator.allocate(4));
}

}  // namespace
}  // namespace hadron
