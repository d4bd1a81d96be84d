#include "core/kernel_timeline.h"

#include <gtest/gtest.h>

namespace hadron {
namespace {

TEST(KernelTimeline, SharesOfTheRunningTimeAndIdleTime) {
  // Out of start order on purpose; b overlaps a's tail (as PDL lets it), the second a follows an
  // idle gap.
  const KernelTimeline t =
      summarise_kernels({{"a", 30'000, 40'000}, {"a", 0, 10'000}, {"b", 5'000, 20'000}});
  EXPECT_DOUBLE_EQ(t.wall_us, 40.0);
  EXPECT_DOUBLE_EQ(t.busy_us, 30.0);  // [0, 20] and [30, 40]
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[0].name, "a");  // [0, 10] and [30, 40]: 20 us, before b's 10
  EXPECT_EQ(t.kernels[0].count, 2);
  EXPECT_DOUBLE_EQ(t.kernels[0].mean_us, 10.0);
  EXPECT_DOUBLE_EQ(t.kernels[0].share_us, 20.0);
  EXPECT_EQ(t.kernels[1].name, "b");
  EXPECT_DOUBLE_EQ(t.kernels[1].mean_us, 15.0);   // its duration includes the overlap
  EXPECT_DOUBLE_EQ(t.kernels[1].share_us, 10.0);  // only [10, 20] is its own
}

TEST(KernelTimeline, IdleGapsByTheirNeighbours) {
  // Two steps of "last" -> (copies) -> "first": the gaps are credited to the kernel that ended
  // last before them (not "inner", which started later but ended earlier) and the next to start.
  const KernelTimeline t = summarise_kernels({{"first", 0, 10'000},
                                              {"last", 5'000, 20'000},
                                              {"inner", 6'000, 8'000},
                                              {"first", 23'000, 30'000},
                                              {"last", 30'000, 40'000},
                                              {"first", 45'000, 50'000},
                                              {"other", 52'000, 53'000}});
  ASSERT_EQ(t.idle.size(), 2u);
  EXPECT_EQ(t.idle[0].before, "last");
  EXPECT_EQ(t.idle[0].after, "first");
  EXPECT_EQ(t.idle[0].count, 2);
  EXPECT_DOUBLE_EQ(t.idle[0].total_us, 8.0);  // [20, 23] and [40, 45]
  EXPECT_EQ(t.idle[1].before, "first");
  EXPECT_EQ(t.idle[1].after, "other");
  EXPECT_DOUBLE_EQ(t.idle[1].total_us, 2.0);
  EXPECT_DOUBLE_EQ(t.wall_us - t.busy_us, 10.0);  // the gaps add up to the idle time
  const std::string table = format_kernel_timeline(t, 2);
  EXPECT_NE(table.find("      4.0   1.0  last -> first"), std::string::npos) << table;
}

TEST(KernelTimeline, SpanInsideAnotherHasNoShare) {
  const KernelTimeline t = summarise_kernels({{"long", 0, 100'000}, {"short", 10'000, 20'000}});
  EXPECT_DOUBLE_EQ(t.wall_us, 100.0);
  EXPECT_DOUBLE_EQ(t.busy_us, 100.0);
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[1].name, "short");
  EXPECT_DOUBLE_EQ(t.kernels[1].share_us, 0.0);
}

TEST(KernelTimeline, EmptyTraceAndPerStepTable) {
  EXPECT_TRUE(summarise_kernels({}).kernels.empty());
  const std::string table =
      format_kernel_timeline(summarise_kernels({{"k", 0, 4'000}, {"k", 6'000, 10'000}}), 2);
  EXPECT_NE(table.find("wall 5.0 us, kernels running 4.0 us, idle 1.0 us"), std::string::npos)
      << table;
  EXPECT_NE(table.find("k "), std::string::npos) << table;
}

TEST(KernelTimeline, ShortNames) {
  EXPECT_EQ(short_kernel_name("void hadron::cuda::(anonymous namespace)::attention_decode_kernel"
                              "<128, false>(hadron::cuda::AttentionArgs, float, float*)"),
            "attention_decode_kernel<128, false>");
  EXPECT_EQ(short_kernel_name("void hadron::cuda::gemv::gemv_kernel<1, __nv_bfloat16, "
                              "(hadron::cuda::gemv::GemvInput)2>(const __nv_bfloat16*, int)"),
            "gemv_kernel<1, __nv_bfloat16, (GemvInput)2>");
  EXPECT_EQ(short_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
}

}  // namespace
}  // namespace hadron
