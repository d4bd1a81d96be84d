// The CPU FP8 references (backends/cpu/fp8_linear.cpp) against their definitions in
// ops/fp8.h and core/dtype.h: e4m3 rounding against a search of all codes, activation
// quantization group by group, and the scaled product recomputed in double from the
// dequantized values, at shapes that are not multiples of 128. Runs without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ops/backend.h"
#include "reference_util.h"

namespace hadron {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The finite e4m3 code nearest to v >= 0, ties to the even code (mantissa LSB 0).
uint8_t nearest_code(float v) {
  int best = 0;
  for (int code = 1; code < 0x7f; ++code) {
    const double error = std::fabs(fp8_e4m3_to_f32(code) - double{v});
    const double best_error = std::fabs(fp8_e4m3_to_f32(best) - double{v});
    if (error < best_error || (error == best_error && code % 2 == 0)) best = code;
  }
  return static_cast<uint8_t>(best);
}

TEST(Fp8Reference, E4m3RoundsToNearestEvenAndSaturates) {
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) continue;  // NaN
    EXPECT_EQ(f32_to_fp8_e4m3(fp8_e4m3_to_f32(code)), code == 0x80 ? 0x80 : code) << code;
  }
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> log_magnitude(-12.0f, 9.5f);
  for (int i = 0; i < 20000; ++i) {
    const float v = std::exp2(log_magnitude(rng));
    const uint8_t expected = v >= 448.0f ? 0x7e : nearest_code(v);
    ASSERT_EQ(f32_to_fp8_e4m3(v), expected) << v;
    ASSERT_EQ(f32_to_fp8_e4m3(-v), expected | 0x80) << -v;
  }
  // Exact midpoints: 1 + 1/16 lies between codes 0x38 (1.0) and 0x39 (1.125): to even 0x38;
  // 1 + 3/16 between 0x39 and 0x3a: to 0x3a.
  EXPECT_EQ(f32_to_fp8_e4m3(1.0625f), 0x38);
  EXPECT_EQ(f32_to_fp8_e4m3(1.1875f), 0x3a);
}

// Quantizes [T, K] and checks every group against its definition.
void check_quantization(int64_t t_count, int64_t k, int64_t group, bool ue8m0) {
  SCOPED_TRACE(testing::Message() << "T " << t_count << " K " << k << " group " << group
                                  << " ue8m0 " << ue8m0);
  std::mt19937_64 rng(std::random_device{}());
  std::vector<float> x = normal_floats(rng, t_count * k, 3.0f);
  for (int64_t i = 0; i < k && i < 7; ++i) x[i] = 0.0f;  // a group with tiny values, or zeros
  const int64_t n_groups = ceil_div(k, group);
  std::vector<uint8_t> codes(t_count * k, 0xff);
  std::vector<float> scales(t_count * n_groups, NAN);
  make_cpu_backend()->quantize_fp8_per_token_group(
      view(x, {t_count, k}), ue8m0,
      {Tensor::view_of(codes.data(), DType::F8_E4M3, {t_count, k}),
       view(scales, {t_count, n_groups}), group});
  for (int64_t t = 0; t < t_count; ++t)
    for (int64_t g = 0; g < n_groups; ++g) {
      float amax = 0;
      for (int64_t i = g * group; i < std::min(k, (g + 1) * group); ++i)
        amax = std::max(amax, std::fabs(x[t * k + i]));
      const float s = scales[t * n_groups + g], plain = std::max(amax, kFp8AmaxFloor) / 448.0f;
      if (ue8m0) {
        int exponent = 0;
        EXPECT_EQ(std::frexp(s, &exponent), 0.5f) << "a power of two";
        EXPECT_GE(s, plain);
        EXPECT_LT(s / 2, plain);
      } else {
        EXPECT_EQ(s, plain);
      }
      for (int64_t i = g * group; i < std::min(k, (g + 1) * group); ++i) {
        const uint8_t code = codes[t * k + i];
        ASSERT_EQ(code, f32_to_fp8_e4m3(x[t * k + i] / s)) << t << ", " << i;
        // Half a step of a 3-bit mantissa, or of the subnormal grid.
        const double deq = fp8_e4m3_to_f32(code) * double{s};
        EXPECT_LE(std::fabs(deq - x[t * k + i]),
                  std::max(std::fabs(x[t * k + i]) / 16, s / 1024.0f))
            << t << ", " << i;
      }
    }
}

TEST(Fp8Reference, QuantizationFollowsItsDefinition) {
  check_quantization(5, 300, 128, false);
  check_quantization(5, 300, 128, true);
  check_quantization(3, 256, 256, false);  // one group per token
  check_quantization(1, 100, 128, true);   // one short group
}

// Random e4m3 codes (no NaN) of [rows, cols].
std::vector<uint8_t> random_codes(std::mt19937_64& rng, int64_t n) {
  std::uniform_int_distribution<int> code(0, 253);
  std::vector<uint8_t> codes(n);
  for (uint8_t& c : codes) {
    c = static_cast<uint8_t>(code(rng));
    if ((c & 0x7f) == 0x7f) c = 0x7e;
  }
  return codes;
}

struct LinearCase {
  int64_t t, n, k, group, block_n, block_k;
  bool bias;
};

// fp8_linear against sum_k deq(x)[t, k] deq(w)[n, k] (+ bias) in double: the f32 sums may
// differ from it by their rounding only.
void check_linear(const LinearCase& c) {
  SCOPED_TRACE(testing::Message() << "T " << c.t << " N " << c.n << " K " << c.k << " group "
                                  << c.group << " blocks " << c.block_n << " x " << c.block_k);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> scale(0.001f, 0.01f);
  std::vector<uint8_t> xq = random_codes(rng, c.t * c.k), wq = random_codes(rng, c.n * c.k);
  const int64_t x_groups = ceil_div(c.k, c.group);
  const int64_t w_rows = ceil_div(c.n, c.block_n), w_cols = ceil_div(c.k, c.block_k);
  std::vector<float> xs(c.t * x_groups), ws(w_rows * w_cols), bias = normal_floats(rng, c.n, 1);
  for (float& s : xs) s = scale(rng);
  for (float& s : ws) s = scale(rng);
  std::vector<float> out(c.t * c.n, NAN);
  const Fp8Activations x{Tensor::view_of(xq.data(), DType::F8_E4M3, {c.t, c.k}),
                         view(xs, {c.t, x_groups}), c.group};
  const Fp8Weight w{Tensor::view_of(wq.data(), DType::F8_E4M3, {c.n, c.k}),
                    view(ws, {w_rows, w_cols}), c.block_n, c.block_k};
  make_cpu_backend()->fp8_linear(x, w, c.bias ? view(bias, {c.n}) : Tensor{},
                                 view(out, {c.t, c.n}));
  double error = 0, norm = 0;
  for (int64_t t = 0; t < c.t; ++t)
    for (int64_t j = 0; j < c.n; ++j) {
      double expected = c.bias ? bias[j] : 0.0;
      for (int64_t i = 0; i < c.k; ++i)
        expected += fp8_e4m3_to_f32(xq[t * c.k + i]) * double{xs[t * x_groups + i / c.group]} *
                    fp8_e4m3_to_f32(wq[j * c.k + i]) * ws[j / c.block_n * w_cols + i / c.block_k];
      error += (out[t * c.n + j] - expected) * (out[t * c.n + j] - expected);
      norm += expected * expected;
    }
  EXPECT_LE(std::sqrt(error / norm), 1e-6);
}

TEST(Fp8Reference, LinearFollowsItsDefinition) {
  check_linear({3, 200, 300, 128, 128, 128, true});   // block-scaled, short last blocks
  check_linear({1, 256, 512, 128, 128, 128, false});  // decode row, whole blocks
  check_linear({4, 70, 300, 300, 1, 300, true});      // per channel, per-token activations
  check_linear({2, 70, 384, 128, 1, 384, false});     // per channel, grouped activations
  check_linear({2, 33, 130, 130, 33, 130, false});    // per tensor
}

// Quantizing both sides loses what three mantissa bits lose: each value's rounding error is
// about 2^-3 / sqrt(12) of its binade's bottom, ~2.4% of it on average, so the product's
// normalised error against f32 is near sqrt(2) x 2.4% ~ 3.4% (measured 3.3-3.8%; bound 5%).
TEST(Fp8Reference, QuantizedLinearApproximatesF32) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t t_count = 8, n = 96, k = 384, groups = 3;
  std::vector<float> x = normal_floats(rng, t_count * k, 1.0f);
  std::vector<float> w = normal_floats(rng, n * k, 0.05f);
  std::vector<float> exact(t_count * n), out(t_count * n, NAN);
  auto cpu = make_cpu_backend();
  cpu->linear(view(x, {t_count, k}), view(w, {n, k}), Tensor{}, view(exact, {t_count, n}));
  // Weights in 1 x 128 blocks, quantized as activations are.
  std::vector<uint8_t> wq(n * k), xq(t_count * k);
  std::vector<float> ws(n * groups), xs(t_count * groups);
  const Fp8Weight weight{Tensor::view_of(wq.data(), DType::F8_E4M3, {n, k}), view(ws, {n, groups}),
                         1, 128};
  const Fp8Activations acts{Tensor::view_of(xq.data(), DType::F8_E4M3, {t_count, k}),
                            view(xs, {t_count, groups}), 128};
  cpu->quantize_fp8_per_token_group(view(w, {n, k}), false, {weight.q, weight.scales, 128});
  cpu->quantize_fp8_per_token_group(view(x, {t_count, k}), false, acts);
  cpu->fp8_linear(acts, weight, Tensor{}, view(out, {t_count, n}));
  double error = 0, norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    error += (out[i] - exact[i]) * (out[i] - exact[i]);
    norm += exact[i] * exact[i];
  }
  const double relative = std::sqrt(error / norm);
  RecordProperty("relative_error", std::to_string(relative));
  EXPECT_LE(relative, 0.05);
  EXPECT_GT(relative, 0.0);
}

}  // namespace
}  // namespace hadron
