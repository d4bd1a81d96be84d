// Helpers for the CUDA-vs-CPU op tests: random inputs (fresh seed per run, printed on
// failure), bf16 uploads whose rounded values feed the CPU reference, poisoned outputs and
// normalised-error comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "ops/backend.h"

namespace hadron::test {

// Tolerances on ||gpu - cpu|| / ||cpu|| for bf16 outputs (rounding alone gives ~1.5e-3).
inline constexpr double kElementwiseTol = 5e-3;  // one rounding of inputs' products
inline constexpr double kGemmTol = 1e-2;         // fp32 accumulation, bf16 output
inline constexpr double kAttentionTol = 1e-2;    // P rounded to bf16 before P V

// A GPU tensor with its owning buffer.
struct DeviceTensor {
  Buffer buffer;
  Tensor tensor;
};

class OpTest : public ::testing::Test {
 protected:
  void SetUp() override;

  std::vector<float> random_floats(int64_t n, float scale = 1.0f);
  std::vector<int32_t> random_ints(int64_t n, int32_t lo, int32_t hi);  // [lo, hi]
  // Rounds values to bf16 in place (so the CPU sees exactly what the GPU gets).
  static void round_bf16(std::vector<float>& values);

  // Uploads as dtype (BF16 or F32; values are rounded to bf16 first when BF16).
  DeviceTensor upload(std::vector<float>& values, std::vector<int64_t> shape,
                      DType dtype = DType::BF16);
  DeviceTensor upload_i32(const std::vector<int32_t>& values, std::vector<int64_t> shape);
  DeviceTensor upload_i64(const std::vector<int64_t>& values, std::vector<int64_t> shape);
  // An output filled with NaN (bf16 0xFFFF / f32 0xFFFFFFFF) so unwritten elements fail.
  DeviceTensor poisoned(std::vector<int64_t> shape, DType dtype = DType::BF16);
  std::vector<float> download(const Tensor& t);
  std::vector<int32_t> download_i32(const Tensor& t);

  static Tensor host_view(std::vector<float>& values, std::vector<int64_t> shape);
  static Tensor host_view_i32(std::vector<int32_t>& values, std::vector<int64_t> shape);

  std::unique_ptr<Backend> cpu_;
  std::unique_ptr<Backend> gpu_;
  std::mt19937_64 rng_;
  uint64_t seed_ = 0;
};

// One sequence of an attention batch: this step's queries and its context after the step.
struct Seq {
  int q_len, kv_len;
};

// n decode sequences (one query each) with contexts of 1 to max_kv tokens.
std::vector<Seq> decode_batch(std::mt19937_64& rng, int n, int max_kv);

// The cache rows at `slots` (each token_elems wide, slots >= 0), so only written slots are
// compared.
std::vector<float> slot_rows(const std::vector<float>& cache, const std::vector<int32_t>& slots,
                             int64_t token_elems);

// ||actual - expected|| / ||expected||; infinite when any value is NaN or sizes differ.
double relative_error(const std::vector<float>& actual, const std::vector<float>& expected);

#define EXPECT_CLOSE(actual, expected, tol)                                    \
  do {                                                                         \
    const double error_ = ::hadron::test::relative_error(actual, expected);    \
    EXPECT_LE(error_, tol) << "normalised error of " #actual " vs " #expected; \
  } while (0)

}  // namespace hadron::test
