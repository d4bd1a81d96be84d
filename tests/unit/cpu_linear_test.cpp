// The CPU backend's linear against a double-precision reference, on both of its paths (up to
// 4 token rows streamed; more in register tiles) at shapes that leave partial tiles and vector
// tails, for every weight dtype it takes; and a token's outputs do not depend on the rows it
// was batched with.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace hadron {
namespace {

struct Weights {
  std::vector<uint16_t> bits16;  // BF16 / F16 storage
  std::vector<float> f32;        // F32 storage, or the exact values of the 16-bit storage
};

// Random weights of `dtype`, with f32 holding the values they represent.
Weights random_weights(DType dtype, int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Weights w;
  w.f32.resize(count);
  for (float& v : w.f32) v = dist(rng);
  if (dtype != DType::F32) {
    w.bits16.resize(count);
    convert_from_f32(w.f32.data(), w.bits16.data(), dtype, count);
    convert_to_f32(w.bits16.data(), dtype, w.f32.data(), count);
  }
  return w;
}

// out [rows, n] = x [rows, k] @ weight^T + bias on the CPU backend.
std::vector<float> cpu_linear(const std::vector<float>& x, int64_t rows, Weights& w, DType dtype,
                              const std::vector<float>& bias, int64_t n, int64_t k) {
  CpuBackend cpu;
  std::vector<float> out(rows * n, NAN);
  void* weight_data = dtype == DType::F32 ? static_cast<void*>(w.f32.data()) : w.bits16.data();
  const Tensor weight = Tensor::view_of(weight_data, dtype, {n, k});
  const Tensor bias_t =
      bias.empty() ? Tensor{} : Tensor::view_of(const_cast<float*>(bias.data()), DType::F32, {n});
  cpu.linear(Tensor::view_of(const_cast<float*>(x.data()), DType::F32, {rows, k}), weight, bias_t,
             Tensor::view_of(out.data(), DType::F32, {rows, n}));
  return out;
}

TEST(CpuLinear, MatchesDoublePrecisionOnBothPaths) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const DType dtype : {DType::F32, DType::BF16, DType::F16}) {
    for (const int64_t k : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{67}, int64_t{256}}) {
      for (const int64_t rows : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{9}}) {
        const int64_t n = 37;  // two full 16-row weight tiles and a partial one; an odd tail
        SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " k " << k << " rows " << rows);
        Weights w = random_weights(dtype, n * k, rng);
        std::vector<float> x(rows * k), bias(n);
        for (float& v : x) v = dist(rng);
        for (float& v : bias) v = dist(rng);
        const std::vector<float> got = cpu_linear(x, rows, w, dtype, bias, n, k);
        for (int64_t t = 0; t < rows; ++t)
          for (int64_t j = 0; j < n; ++j) {
            double want = bias[j], magnitude = std::fabs(bias[j]);
            for (int64_t c = 0; c < k; ++c) {
              want += double{x[t * k + c]} * w.f32[j * k + c];
              magnitude += std::fabs(double{x[t * k + c]} * w.f32[j * k + c]);
            }
            // fp32 accumulation: a few ulps of the sum of magnitudes.
            EXPECT_NEAR(got[t * n + j], want, 1e-6 * magnitude + 1e-7)
                << "row " << t << " out " << j;
          }
      }
    }
  }
}

TEST(CpuLinear, RowsDoNotDependOnTheirBatch) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t n = 21, k = 75;
  Weights w = random_weights(DType::BF16, n * k, rng);
  std::vector<float> x(11 * k);
  for (float& v : x) v = dist(rng);
  const std::vector<float> all = cpu_linear(x, 11, w, DType::BF16, {}, n, k);
  // The tiled path (more than 4 rows) at every batch size that starts at row 0 or row 3: the
  // shared rows' outputs are bit for bit the same.
  for (const int64_t first : {int64_t{0}, int64_t{3}})
    for (int64_t rows = 5; first + rows <= 11; ++rows) {
      const std::vector<float> part(x.begin() + first * k, x.begin() + (first + rows) * k);
      const std::vector<float> got = cpu_linear(part, rows, w, DType::BF16, {}, n, k);
      for (int64_t i = 0; i < rows * n; ++i)
        ASSERT_EQ(got[i], all[first * n + i]) << "rows " << first << ".." << first + rows;
    }
}

}  // namespace
}  // namespace hadron
