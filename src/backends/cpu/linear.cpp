// out = x @ weight^T (+ bias) with fp32 accumulation, weights in F32, F16 or BF16.
//
// Decode (few rows): each thread streams a slice of weight rows once, converting on the fly.
// Prefill: weight rows are converted to fp32 in tiles and reused across all token rows, kTileM
// token rows by kTileN weight rows at a time (dot_tile: each product one 8-lane accumulator, so
// every FMA chain has independent neighbours and each loaded vector feeds several of them).
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vector_math.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
namespace {

constexpr int64_t kSmallBatch = 4;  // rows handled by the streaming path
constexpr int64_t kTileRows = 16;   // weight rows converted at a time on the tiled path

constexpr int kTileM = 4, kTileN = 2;  // token rows x weight rows of a dot_tile
using Lanes = float __attribute__((vector_size(32)));

// out[i * out_stride + j] = x_i . w_j for i < m <= kTileM, j < n <= kTileN (rows of k floats,
// x_i at x + i * k, w_j at w + j * k). Each product is the same arithmetic whatever m and n
// are (short tiles compute on clamped rows and drop them): 8 lanes over whole vectors, summed
// in a fixed order, then the tail; so a token's outputs do not depend on how the rows were
// tiled.
HADRON_VECTOR_CLONES
void dot_tile(const float* x, int m, const float* w, int n, int64_t k, float* out,
              int64_t out_stride) {
  const float* xr[kTileM];
  const float* wr[kTileN];
  for (int i = 0; i < kTileM; ++i) xr[i] = x + std::min(i, m - 1) * k;
  for (int j = 0; j < kTileN; ++j) wr[j] = w + std::min(j, n - 1) * k;
  Lanes acc[kTileM][kTileN] = {};
  int64_t c = 0;
  for (; c + 8 <= k; c += 8) {
    Lanes wv[kTileN], xv;  // unaligned loads
    for (int j = 0; j < kTileN; ++j) std::memcpy(&wv[j], wr[j] + c, sizeof(Lanes));
    for (int i = 0; i < kTileM; ++i) {
      std::memcpy(&xv, xr[i] + c, sizeof(Lanes));
      for (int j = 0; j < kTileN; ++j) acc[i][j] += xv * wv[j];
    }
  }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      const Lanes& a = acc[i][j];
      float sum = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
      for (int64_t t = c; t < k; ++t) sum += xr[i][t] * wr[j][t];
      out[i * out_stride + j] = sum;
    }
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
    for (int64_t t = 0; t < n_rows; t += kTileM) {
      const int m = static_cast<int>(std::min<int64_t>(kTileM, n_rows - t));
      for (int64_t j = j0; j < j1; j += kTileN)
        dot_tile(x + t * k, m, scratch.data() + (j - j0) * k,
                 static_cast<int>(std::min<int64_t>(kTileN, j1 - j)), k, out + t * n + j, n);
      if (bias)
        for (int64_t i = t; i < t + m; ++i)
          for (int64_t j = j0; j < j1; ++j) out[i * n + j] += bias[j];
    }
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
  HADRON_CHECK(weight.dtype != DType::F8_E4M3 && weight.dtype != DType::F8_E5M2,
               "linear: FP8 weight {} has scales; it goes through fp8_linear", weight.describe());
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
