#include <gtest/gtest.h>

#include "core/arena.h"
#include "core/buffer.h"
#include "core/error.h"

namespace hadron {
namespace {

TEST(Tensor, ViewsAndSlices) {
  Buffer buffer = Buffer::host(6 * 4 * sizeof(float));
  const Tensor t = buffer.view(DType::F32, {6, 4});
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides[0], 4);
  EXPECT_TRUE(t.is_contiguous());
  const Tensor rows = t.slice_rows(2, 5);
  EXPECT_EQ(rows.size(0), 3);
  EXPECT_EQ(rows.ptr<float>(), t.ptr<float>() + 8);
  EXPECT_EQ(t.reshape({2, 3, 4}).size(1), 3);
  EXPECT_THROW(t.reshape({5, 5}), Error);
  EXPECT_THROW(t.slice_rows(4, 7), Error);
  EXPECT_THROW(buffer.view(DType::F32, {7, 4}), Error);  // larger than the buffer
  EXPECT_EQ(t.describe(), "F32[6, 4] cpu");
}

TEST(Arena, AllocatesAlignedAndTracksHighWater) {
  Arena arena(Buffer::host(4096));
  const Tensor a = arena.alloc(DType::F32, {3});
  const Tensor b = arena.alloc(DType::BF16, {5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % 256, 0u);
  EXPECT_NE(a.data, b.data);
  const size_t mark = arena.used();
  arena.alloc(DType::F32, {100});
  arena.rewind(mark);
  EXPECT_EQ(arena.used(), mark);
  EXPECT_GE(arena.high_water(), mark + 400);
  EXPECT_THROW(arena.alloc(DType::F32, {2000}), Error);
}

}  // namespace
}  // namespace hadron
