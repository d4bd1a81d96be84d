// FP8 checkpoints through the real loader: F8_E4M3 weights with block, per-channel or
// per-tensor scales beside them load as q x s, exactly, and their scales count as used.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../loader/fp8_quantize.h"
#include "../loader/test_files.h"
#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "models/weight_loader.h"

namespace hadron {
namespace {

using testing::Fp8Quantized;
using testing::TensorBytes;

constexpr int64_t kRows = 200, kCols = 300;  // not multiples of 128: partial blocks

std::vector<float> random_weight(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> weight(kRows * kCols);
  for (float& w : weight) w = normal(rng);
  return weight;
}

std::string bf16_bytes(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(f32_to_bf16(v));
  return testing::bytes_of(bits);
}

struct Fp8Case {
  std::vector<float> weight;
  Fp8Quantized q;
  int64_t block_rows, block_cols;
  std::vector<TensorBytes> tensors;  // the checkpoint
};

// `weight` quantized in blocks of block_rows x block_cols, its scale stored as scale_name with
// scale_shape (the scales' count, laid out as a toolkit writes them).
Fp8Case make_case(int64_t block_rows, int64_t block_cols, const std::string& scale_name,
                  std::vector<int64_t> scale_shape, bool bf16_scale) {
  Fp8Case c{
      random_weight(static_cast<uint32_t>(std::random_device{}())), {}, block_rows, block_cols, {}};
  c.q = testing::quantize_fp8(c.weight, kRows, kCols, block_rows, block_cols, bf16_scale);
  c.tensors.push_back({"layer.weight", "F8_E4M3", {kRows, kCols}, testing::bytes_of(c.q.codes)});
  c.tensors.push_back({scale_name, bf16_scale ? "BF16" : "F32", std::move(scale_shape),
                       bf16_scale ? bf16_bytes(c.q.scales) : testing::bytes_of(c.q.scales)});
  return c;
}

// Loads layer.weight through load_weights on the CPU backend (f32 weights) and checks every
// value against q x s, and against the original within e4m3's rounding error.
void expect_loads_as_q_times_s(const Fp8Case& c, const QuantConfig& quant) {
  const testing::ScratchDir dir;
  const std::string path = dir.write("model.safetensors", testing::safetensors_bytes(c.tensors));
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  Tensor weight;
  WeightPlan plan;
  plan.add(&weight, "layer.weight", {kRows, kCols});
  const LoadedWeights loaded = load_weights(plan, Checkpoint::open(path), *backend, false, quant);
  ASSERT_EQ(weight.dtype, DType::F32);
  int64_t mismatches = 0;
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t col = 0; col < kCols; ++col) {
      const int64_t i = r * kCols + col;
      const float s = c.q.scales[r / c.block_rows * c.q.scale_cols + col / c.block_cols];
      const float expected = fp8_e4m3_to_f32(c.q.codes[i]) * s;
      mismatches += weight.ptr<float>()[i] != expected;
      // Round to nearest: half an ulp of 3 mantissa bits (2^-4 relative) for normals, half the
      // subnormal step 2^-9 (2^-10 x s) below 2^-6 x s.
      const float bound = std::max(std::ldexp(std::abs(c.weight[i]), -4), std::ldexp(s, -10));
      ASSERT_LE(std::abs(expected - c.weight[i]), bound * 1.0001f) << "at " << r << ", " << col;
    }
  EXPECT_EQ(mismatches, 0);
}

TEST(Fp8Weights, BlockScaledLoadAsQTimesS) {
  const QuantConfig quant{"fp8", "e4m3", "dynamic", {128, 128}, {}, ""};
  expect_loads_as_q_times_s(make_case(128, 128, "layer.weight_scale_inv", {2, 3}, false), quant);
  expect_loads_as_q_times_s(make_case(128, 128, "layer.weight_scale_inv", {2, 3}, true), quant);
}

TEST(Fp8Weights, BlockSizeComesFromTheConfig) {
  const QuantConfig quant{"fp8", "e4m3", "dynamic", {64, 32}, {}, ""};
  expect_loads_as_q_times_s(make_case(64, 32, "layer.weight_scale_inv", {4, 10}, false), quant);
}

TEST(Fp8Weights, PerChannelAndPerTensorWeightScale) {
  const QuantConfig quant{"compressed-tensors", "", "", {}, {}, ""};
  expect_loads_as_q_times_s(make_case(1, kCols, "layer.weight_scale", {kRows, 1}, true), quant);
  expect_loads_as_q_times_s(make_case(1, kCols, "layer.weight_scale", {kRows}, false), quant);
  expect_loads_as_q_times_s(make_case(kRows, kCols, "layer.weight_scale", {1}, false), quant);
  // A static activation scale is consumed with its weight, not reported unused.
  Fp8Case with_input = make_case(kRows, kCols, "layer.weight_scale", {1}, true);
  with_input.tensors.push_back(
      {"layer.input_scale", "F32", {1}, testing::bytes_of(std::vector{0.5f})});
  expect_loads_as_q_times_s(with_input, quant);
}

std::string load_error(const std::vector<TensorBytes>& tensors, const QuantConfig& quant) {
  const testing::ScratchDir dir;
  const std::string path = dir.write("model.safetensors", testing::safetensors_bytes(tensors));
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  Tensor weight;
  WeightPlan plan;
  plan.add(&weight, "layer.weight", {kRows, kCols});
  return testing::input_error_of(
      [&] { load_weights(plan, Checkpoint::open(path), *backend, false, quant); });
}

TEST(Fp8Weights, ReportsScalesThatFitNoLayout) {
  const QuantConfig quant{"fp8", "e4m3", "dynamic", {128, 128}, {}, ""};
  const Fp8Case c = make_case(128, 128, "layer.weight_scale_inv", {3, 2}, false);
  const std::string error = load_error(c.tensors, quant);
  EXPECT_NE(error.find("layer.weight_scale_inv in "), std::string::npos) << error;
  EXPECT_NE(error.find("shape [3, 2] is no FP8 scale layout for weight [200, 300]"),
            std::string::npos)
      << error;
}

// Without its scale an FP8 weight would load off by the scale; a config promising FP8 makes
// that an error, while a plain F8_E4M3 checkpoint keeps loading as stored.
TEST(Fp8Weights, AnFp8WeightWithoutScaleFailsOnlyUnderAQuantConfig) {
  const Fp8Case c = make_case(128, 128, "layer.weight_scale_inv", {2, 3}, false);
  const std::vector<TensorBytes> unscaled = {c.tensors[0]};
  const std::string error = load_error(unscaled, {"fp8", "e4m3", "dynamic", {128, 128}, {}, ""});
  EXPECT_NE(error.find("layer.weight in "), std::string::npos) << error;
  EXPECT_NE(error.find("no weight_scale_inv or weight_scale beside it"), std::string::npos)
      << error;
  EXPECT_EQ(load_error(unscaled, {}), "");
}

}  // namespace
}  // namespace hadron
