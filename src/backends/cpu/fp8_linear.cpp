// The FP8 linear's reference (ops/fp8.h): dynamic per-token-group activation quantization and
// the scaled e4m3 x e4m3 product, as DeepSeek's block-scaled GEMM defines it. e4m3 codes are
// widened to f32 exactly through a table; products of two e4m3 values are exact in f32, so the
// only roundings are the f32 sums (per segment, then across segments) and the output's.
// Hopper's FP8 MMA adds within a segment at lower precision than f32; that difference is the
// GPU kernels' tolerance against this reference.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vector_math.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
namespace {

constexpr int64_t kWidenRows = 16;  // weight rows widened to f32 at a time

int64_t fp8_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> values{};
    for (int code = 0; code < 256; ++code)
      values[code] = fp8_e4m3_to_f32(static_cast<uint8_t>(code));
    return values;
  }();
  return table;
}

void widen_e4m3(const uint8_t* codes, int64_t n, float* out) {
  const std::array<float, 256>& table = e4m3_table();
  for (int64_t i = 0; i < n; ++i) out[i] = table[codes[i]];
}

float scale_at(const Tensor& scales, int64_t row, int64_t col) {
  return scales.ptr<float>()[row * scales.strides[0] + col * scales.strides[1]];
}

void check_fp8_linear(const Fp8Activations& x, const Fp8Weight& w, const Tensor& out) {
  const int64_t t = x.q.size(0), k = x.q.size(1), n = w.q.size(0);
  HADRON_CHECK(x.q.dtype == DType::F8_E4M3 && x.q.ndim == 2 && x.q.is_contiguous() &&
                   w.q.dtype == DType::F8_E4M3 && w.q.ndim == 2 && w.q.size(1) == k &&
                   w.q.is_contiguous() && out.dtype == DType::F32 && out.is_contiguous() &&
                   out.size(0) == t && out.size(-1) == n,
               "fp8_linear {} x {}^T into {}", x.q.describe(), w.q.describe(), out.describe());
  HADRON_CHECK(w.block_n > 0 && w.block_k > 0 && w.scales.dtype == DType::F32 &&
                   w.scales.is_contiguous() && w.scales.ndim == 2 &&
                   w.scales.size(0) == fp8_ceil_div(n, w.block_n) &&
                   w.scales.size(1) == fp8_ceil_div(k, w.block_k),
               "fp8_linear: weight scales {} for [{}, {}] in blocks of {} x {}",
               w.scales.describe(), n, k, w.block_n, w.block_k);
  HADRON_CHECK(x.group > 0 && x.scales.dtype == DType::F32 && x.scales.ndim == 2 &&
                   x.scales.size(0) == t && x.scales.size(1) == fp8_ceil_div(k, x.group),
               "fp8_linear: activation scales {} for [{}, {}] in groups of {}", x.scales.describe(),
               t, k, x.group);
  const int64_t shorter = std::min(x.group, w.block_k), longer = std::max(x.group, w.block_k);
  HADRON_CHECK(longer % shorter == 0 || longer >= k,
               "fp8_linear: activation group {} and weight block_k {} do not nest", x.group,
               w.block_k);
}

}  // namespace

void CpuBackend::quantize_fp8_per_token_group(const Tensor& x, bool ue8m0,
                                              const Fp8Activations& out) {
  const int64_t t_count = x.size(0), k = x.size(-1), group = out.group;
  HADRON_CHECK(x.is_contiguous() && out.q.dtype == DType::F8_E4M3 && out.q.is_contiguous() &&
                   out.q.size(0) == t_count && out.q.size(-1) == k && group > 0 &&
                   out.scales.dtype == DType::F32 && out.scales.ndim == 2 &&
                   out.scales.size(0) == t_count && out.scales.size(1) == fp8_ceil_div(k, group),
               "quantize_fp8_per_token_group {} into {} and scales {} (group {})", x.describe(),
               out.q.describe(), out.scales.describe(), group);
  ThreadPool::global().parallel_for(
      t_count,
      [&](int64_t begin, int64_t end) {
        std::vector<float> row(k);
        for (int64_t t = begin; t < end; ++t) {
          load_row_f32(x, t * k, k, row.data());
          uint8_t* codes = out.q.ptr<uint8_t>() + t * k;
          for (int64_t g0 = 0; g0 < k; g0 += group) {
            const int64_t g1 = std::min(k, g0 + group);
            float amax = 0;
            for (int64_t i = g0; i < g1; ++i) amax = std::fmax(amax, std::fabs(row[i]));
            const float scale = fp8_scale_for(amax, ue8m0);
            for (int64_t i = g0; i < g1; ++i) codes[i] = f32_to_fp8_e4m3(row[i] / scale);
            out.scales
                .ptr<float>()[t * out.scales.strides[0] + g0 / group * out.scales.strides[1]] =
                scale;
          }
        }
      },
      t_count * k);
}

void CpuBackend::fp8_linear(const Fp8Activations& x, const Fp8Weight& weight, const Tensor& bias,
                            const Tensor& out) {
  check_fp8_linear(x, weight, out);
  const int64_t t_count = x.q.size(0), k = x.q.size(1), n = weight.q.size(0);
  const int64_t segment = std::min({x.group, weight.block_k, k});
  std::vector<float> bias_f32(n, 0.0f);
  if (bias.defined()) {
    HADRON_CHECK(bias.numel() == n, "bias {} for {} outputs", bias.describe(), n);
    load_row_f32(bias, 0, n, bias_f32.data());
  }
  std::vector<float> xs(t_count * k);
  widen_e4m3(x.q.ptr<uint8_t>(), t_count * k, xs.data());
  const int64_t n_tiles = fp8_ceil_div(n, kWidenRows);
  ThreadPool::global().parallel_for(
      n_tiles,
      [&](int64_t tile_begin, int64_t tile_end) {
        std::vector<float> ws(kWidenRows * k);
        for (int64_t j0 = tile_begin * kWidenRows; j0 < std::min(n, tile_end * kWidenRows);
             j0 += kWidenRows) {
          const int64_t j1 = std::min(n, j0 + kWidenRows);
          widen_e4m3(weight.q.ptr<uint8_t>() + j0 * k, (j1 - j0) * k, ws.data());
          for (int64_t t = 0; t < t_count; ++t)
            for (int64_t j = j0; j < j1; ++j) {
              float acc = 0;
              for (int64_t s0 = 0; s0 < k; s0 += segment) {
                const float partial = dot_f32(xs.data() + t * k + s0, ws.data() + (j - j0) * k + s0,
                                              std::min(segment, k - s0));
                acc += partial * (scale_at(x.scales, t, s0 / x.group) *
                                  scale_at(weight.scales, j / weight.block_n, s0 / weight.block_k));
              }
              out.ptr<float>()[t * n + j] = acc + bias_f32[j];
            }
        }
      },
      t_count * n * k);
}

}  // namespace hadron
