// Skinny matrix product for decode (M <= 8 rows): bandwidth-bound, so the point is to keep
// every SM's loads in flight from the first cycle to the last.
//  - One resident wave: the grid holds as many warps as fit on the GPU at once, trimmed so
//    every warp owns the same number of weight rows (row r belongs to warp r mod n_warps).
//  - A lane streams 16-byte weight vectors of its warp's row, kChunk of them per step, and
//    issues the next step's loads (which may belong to its next row) before the current
//    step's arithmetic, so a warp always has loads outstanding.
//  - Each weight vector serves all M activation rows (M * K * 2 bytes, L1/L2-resident).
//  - Launched with programmatic dependent launch: a warp issues its first weight loads before
//    pdl_wait(), while the kernel that produces x is still finishing.
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;
constexpr int kChunk = 8;  // 16-byte weight loads per lane per step

// Weights are read once per step: stream them past L1 (x stays there) with evict-first.
__device__ __forceinline__ Bf16x8 load_weight(const bf16* p) {
  const int4 v = __ldcs(reinterpret_cast<const int4*>(p));
  return *reinterpret_cast<const Bf16x8*>(&v);
}

template <int kM, typename Out>
__global__ void __launch_bounds__(kThreads, 2)
    gemv_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w,
                const Out* __restrict__ bias, Out* __restrict__ out, int n, int k) {
  const int lane = threadIdx.x % 32;
  const int n_warps = gridDim.x * kWarps;
  const int first_row = blockIdx.x * kWarps + threadIdx.x / 32;
  const int n_vec = k / 8;
  const int steps_per_row = (n_vec + 32 * kChunk - 1) / (32 * kChunk);
  const int my_rows = first_row < n ? (n - 1 - first_row) / n_warps + 1 : 0;
  const int n_steps = my_rows * steps_per_row;

  auto load_step = [&](int step, Bf16x8(&buffer)[kChunk]) {
    const int row = first_row + (step / steps_per_row) * n_warps;
    const int base = (step % steps_per_row) * 32 * kChunk + lane;
    const bf16* w_row = w + int64_t{row} * k;
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const int c = base + u * 32;
      if (c < n_vec) buffer[u] = load_weight(w_row + int64_t{c} * 8);
    }
  };

  // Before the wait (the kernel before may still be running): the first step's loads.
  Bf16x8 current[kChunk], next[kChunk];
  if (n_steps > 0) load_step(0, current);
  pdl_wait();
  pdl_launch_dependents();

  float acc[kM] = {};
  for (int step = 0; step < n_steps; ++step) {
    if (step + 1 < n_steps) load_step(step + 1, next);
    const int base = (step % steps_per_row) * 32 * kChunk + lane;
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const int c = base + u * 32;
      if (c >= n_vec) break;
      float wf[8];
      to_f32(current[u], wf);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float xf[8];
        to_f32(load8(x + int64_t{m} * k + int64_t{c} * 8), xf);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[m] += wf[e] * xf[e];
      }
    }
    if (step % steps_per_row == steps_per_row - 1) {
      const int row = first_row + (step / steps_per_row) * n_warps;
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float value = warp_sum(acc[m]);
        acc[m] = 0;
        if (lane == 0) {
          if (bias != nullptr) value += static_cast<float>(bias[row]);
          if constexpr (sizeof(Out) == 4) {
            out[int64_t{m} * n + row] = value;
          } else {
            out[int64_t{m} * n + row] = __float2bfloat16(value);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kChunk; ++u) current[u] = next[u];
  }
}

// Blocks for one resident wave, trimmed so that every warp owns ceil(n / warps) rows.
template <int kM, typename Out>
int64_t plan_blocks(int64_t n) {
  static const int64_t resident_warps = [] {
    int device = 0, n_sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gemv_kernel<kM, Out>,
                                                             kThreads, 0));
    return int64_t{n_sms} * std::max(per_sm, 1) * kWarps;
  }();
  const int64_t rows_per_warp = ceil_div(n, resident_warps);
  return ceil_div(ceil_div(n, rows_per_warp), kWarps);
}

template <int kM, typename Out>
void launch_typed(const void* x, const void* w, const void* bias, void* out, int64_t n,
                  int64_t k, cudaStream_t stream) {
  launch_pdl(gemv_kernel<kM, Out>, dim3(plan_blocks<kM, Out>(n)), dim3(kThreads), 0, stream,
             static_cast<const bf16*>(x), static_cast<const bf16*>(w),
             static_cast<const Out*>(bias), static_cast<Out*>(out), static_cast<int>(n),
             static_cast<int>(k));
}

template <int kM>
void launch_with(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                 int64_t n, int64_t k, cudaStream_t stream) {
  if (out_f32) {
    launch_typed<kM, float>(x, w, bias, out, n, k, stream);
  } else {
    launch_typed<kM, bf16>(x, w, bias, out, n, k, stream);
  }
}

}  // namespace

void launch_gemv(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                 int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  switch (m) {
    case 1: return launch_with<1>(x, w, bias, out, out_f32, n, k, stream);
    case 2: return launch_with<2>(x, w, bias, out, out_f32, n, k, stream);
    case 3: return launch_with<3>(x, w, bias, out, out_f32, n, k, stream);
    case 4: return launch_with<4>(x, w, bias, out, out_f32, n, k, stream);
    case 5: return launch_with<5>(x, w, bias, out, out_f32, n, k, stream);
    case 6: return launch_with<6>(x, w, bias, out, out_f32, n, k, stream);
    case 7: return launch_with<7>(x, w, bias, out, out_f32, n, k, stream);
    case 8: return launch_with<8>(x, w, bias, out, out_f32, n, k, stream);
    default: fail_dispatch("gemv rows", static_cast<int>(m), {1, 2, 3, 4, 5, 6, 7, 8});
  }
}

}  // namespace hadron::cuda
