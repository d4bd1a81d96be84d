// Weights kept in FP8 by the loader: scales of fused parts merged (or refused where a block
// would straddle a seam), and dummy FP8 weights in a checkpoint's layout whose codes x scales
// are the plain dummy values within e4m3's rounding.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "loader/fp8_weights.h"
#include "models/weight_loader.h"

namespace hadron {
namespace {

Fp8Scales scales_of(std::vector<float> values, int64_t cols, int64_t block_rows,
                    int64_t block_cols) {
  return {nullptr, std::move(values), cols, block_rows, block_cols};
}

TEST(Fp8KeptWeights, MergesBlockScalesAlongWholeBlocks) {
  const Fp8Scales q = scales_of({1, 2, 3, 4}, 200, 128, 128);  // [256, 200]: 2 x 2 blocks
  const Fp8Scales k = scales_of({5, 6}, 200, 128, 128);        // [100, 200]: 1 x 2
  const std::optional<Fp8Layout> merged = merge_fp8_scales({&q, &k}, {256, 100});
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->scales, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(merged->scale_rows, 3);
  EXPECT_EQ(merged->scale_cols, 2);
  EXPECT_EQ(merged->block_n, 128);
  // q of 100 rows would share its last block's rows with k's first: no merged layout.
  const Fp8Scales short_q = scales_of({1, 2}, 200, 128, 128);
  EXPECT_FALSE(merge_fp8_scales({&short_q, &k}, {100, 100}).has_value());
}

TEST(Fp8KeptWeights, PerTensorPartsBecomePerChannel) {
  const Fp8Scales a = scales_of({0.5f}, 64, 3, 64), b = scales_of({2.0f}, 64, 2, 64);
  const std::optional<Fp8Layout> merged = merge_fp8_scales({&a, &b}, {3, 2});
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->scales, (std::vector<float>{0.5f, 0.5f, 0.5f, 2.0f, 2.0f}));
  EXPECT_EQ(merged->block_n, 1);
  EXPECT_EQ(merged->block_k, 64);
  const Fp8Scales channel = scales_of({1, 1}, 64, 1, 64);  // mixed with per-channel: same
  EXPECT_TRUE(merge_fp8_scales({&a, &channel}, {3, 2}).has_value());
  const Fp8Scales blocks = scales_of({1}, 64, 128, 128);  // mixed with blocks: refused
  EXPECT_FALSE(merge_fp8_scales({&a, &blocks}, {3, 2}).has_value());
}

TEST(Fp8KeptWeights, DummyFp8IsTheDummyValuesInBlockLayout) {
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  const int64_t rows = 200, cols = 300;
  Tensor plain, codes;
  Fp8Weight fp8;
  WeightPlan plain_plan, fp8_plan;
  plain_plan.add(&plain, "w", {rows, cols});
  fp8_plan.add(&codes, "w", {rows, cols});
  fp8_plan.allow_fp8(&codes, &fp8);
  QuantConfig quant;
  quant.method = "fp8";
  quant.weight_block_size = {128, 128};
  quant.scale_fmt = "ue8m0";
  const LoadedWeights a = load_dummy_weights(plain_plan, *backend, DType::F32, 7);
  const LoadedWeights b =
      load_dummy_weights(fp8_plan, *backend, DType::F32, 7, false, quant, Quantization::kFp8);
  ASSERT_TRUE(fp8.defined());
  EXPECT_EQ(fp8.q.dtype, DType::F8_E4M3);
  EXPECT_EQ(fp8.q.data, codes.data);
  EXPECT_EQ(fp8.scales.size(0), 2);
  EXPECT_EQ(fp8.scales.size(1), 3);
  EXPECT_EQ(fp8.block_n, 128);
  EXPECT_EQ(fp8.act_group, 128);
  EXPECT_TRUE(fp8.ue8m0);
  EXPECT_LT(b.bytes, a.bytes);
  const int64_t scale_cols = fp8.scales.size(1);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const int64_t r = i / cols, c = i % cols;
    const float s = fp8.scales.ptr<float>()[r / 128 * scale_cols + c / 128];
    const float value = plain.ptr<float>()[i];
    const float deq = fp8_e4m3_to_f32(fp8.q.ptr<uint8_t>()[i]) * s;
    ASSERT_LE(std::fabs(deq - value), std::max(std::fabs(value) / 16, s / 1024)) << r << ", " << c;
  }
}

}  // namespace
}  // namespace hadron
