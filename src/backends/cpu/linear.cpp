// out = x @ weight^T (+ bias) with fp32 accumulation, weights in F32, F16 or BF16.
//
// Decode (few rows): each thread streams a slice of weight rows once, converting on the fly.
// Prefill: weight rows are converted to fp32 in tiles and reused across all token rows.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
namespace {

constexpr int64_t kSmallBatch = 4;  // rows handled by the streaming path
constexpr int64_t kTileRows = 16;   // weight rows converted at a time on the tiled path

// An AVX2 clone and a generic one, picked at load time by an ifunc resolver. ThreadSanitizer
// instruments that resolver, which runs before the sanitizer is set up, so TSan builds keep
// the generic version only.
#if defined(__SANITIZE_THREAD__)
#define HADRON_DOT_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HADRON_DOT_CLONES
#endif
#endif
#ifndef HADRON_DOT_CLONES
#define HADRON_DOT_CLONES __attribute__((target_clones("arch=haswell", "default")))
#endif

HADRON_DOT_CLONES
float dot_f32(const float* x, const float* w, int64_t n) {
  float acc = 0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += x[i] * w[i];
  return acc;
}

HADRON_DOT_CLONES
float dot_bf16(const float* x, const uint16_t* w, int64_t n) {
  float acc = 0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += x[i] * bits_to_f32(uint32_t{w[i]} << 16);
  return acc;
}

float dot_any(const float* x, const Tensor& weight, int64_t row, int64_t k, float* scratch) {
  const char* base = static_cast<const char*>(weight.data);
  switch (weight.dtype) {
    case DType::F32:
      return dot_f32(x, reinterpret_cast<const float*>(base) + row * k, k);
    case DType::BF16:
      return dot_bf16(x, reinterpret_cast<const uint16_t*>(base) + row * k, k);
    default:
      load_row_f32(weight, row * k, k, scratch);
      return dot_f32(x, scratch, k);
  }
}

void linear_rows(const float* x, int64_t n_rows, const Tensor& weight, const float* bias,
                 float* out, int64_t n_begin, int64_t n_end) {
  const int64_t k = weight.size(1), n = weight.size(0);
  std::vector<float> scratch(k * kTileRows);
  if (n_rows <= kSmallBatch) {
    for (int64_t j = n_begin; j < n_end; ++j)
      for (int64_t t = 0; t < n_rows; ++t)
        out[t * n + j] = dot_any(x + t * k, weight, j, k, scratch.data()) + (bias ? bias[j] : 0);
    return;
  }
  for (int64_t j0 = n_begin; j0 < n_end; j0 += kTileRows) {
    const int64_t j1 = std::min(n_end, j0 + kTileRows);
    load_row_f32(weight, j0 * k, (j1 - j0) * k, scratch.data());
    for (int64_t t = 0; t < n_rows; ++t)
      for (int64_t j = j0; j < j1; ++j)
        out[t * n + j] = dot_f32(x + t * k, scratch.data() + (j - j0) * k, k) +
                         (bias ? bias[j] : 0);
  }
}

}  // namespace

void CpuBackend::linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const Tensor& out) {
  const int64_t n_rows = x.size(0), k = x.size(-1), n = weight.size(0);
  HADRON_CHECK(weight.ndim == 2 && weight.size(1) == k && out.size(0) == n_rows &&
                   out.size(-1) == n && x.dtype == DType::F32 && out.dtype == DType::F32 &&
                   x.is_contiguous() && out.is_contiguous(),
               "linear {} x {}^T into {}", x.describe(), weight.describe(), out.describe());
  std::vector<float> bias_f32;
  if (bias.defined()) {
    HADRON_CHECK(bias.numel() == n, "bias {} for {} outputs", bias.describe(), n);
    bias_f32.resize(n);
    load_row_f32(bias, 0, n, bias_f32.data());
  }
  const float* bias_ptr = bias.defined() ? bias_f32.data() : nullptr;
  // Chunks of whole tiles, so threads never share an output cache line's tile.
  const int64_t n_tiles = (n + kTileRows - 1) / kTileRows;
  ThreadPool::global().parallel_for(
      n_tiles,
      [&](int64_t tile_begin, int64_t tile_end) {
        linear_rows(x.ptr<float>(), n_rows, weight, bias_ptr, out.ptr<float>(),
                    tile_begin * kTileRows, std::min(n, tile_end * kTileRows));
      },
      n_rows * n * k);
}

}  // namespace hadron
