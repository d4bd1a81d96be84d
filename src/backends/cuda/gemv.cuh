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
// Optionally (kNorm) with the residual add + RMSNorm in front fused in: every block computes
// the normed rows itself into shared memory after the wait, while its first weight loads are
// in flight (gemv_norm.cu).
// Shared by gemv.cu (the plain product) and gemv_norm.cu (with the norm), which instantiate it
// in two translation units.
#pragma once

#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/rms_norm.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda::gemv {

constexpr int kWarps = 8, kThreads = kWarps * 32;
constexpr int kChunk = 8;  // 16-byte weight loads per lane per step

// x[m] = rms_norm(residual[m] + add[m]) * weight for the kM rows, into shared memory, with
// rms_norm.cu's steps (rms_norm.cuh) over the same thread layout, so the fused and the
// separate paths agree bit for bit. Block 0 also writes residual_out and normed.
template <int kM>
__device__ __forceinline__ void norm_prologue(const GemvNormArgs& a, int k, bf16* xs) {
  const int n_vec = k / 8;
  const auto* add = static_cast<const bf16*>(a.add);
  const auto* residual = static_cast<const bf16*>(a.residual);
  auto* residual_out = static_cast<bf16*>(a.residual_out);
  auto* normed = static_cast<bf16*>(a.normed);
  const bool writer = blockIdx.x == 0;
  float sum_squares[kM] = {};
  for (int c = threadIdx.x; c < n_vec; c += kThreads) {
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      const int64_t offset = int64_t{m} * k + c * 8;
      Bf16x8 stream = load8(residual + offset);
      float values[8];
      if (add != nullptr) {
        stream = residual_add(stream, load8(add + offset), values);
        if (writer) store8(residual_out + offset, stream);
      } else {
        to_f32(stream, values);
      }
      store8(xs + offset, stream);
#pragma unroll
      for (int e = 0; e < 8; ++e) sum_squares[m] += values[e] * values[e];
    }
  }
  float inv_rms[kM];
  block_inv_rms<kThreads>(sum_squares, k, a.eps, inv_rms);
  const auto* weight = static_cast<const bf16*>(a.weight);
  for (int c = threadIdx.x; c < n_vec; c += kThreads) {
    const Bf16x8 scale = load8(weight + c * 8);
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      const int64_t offset = int64_t{m} * k + c * 8;
      float values[8];
      to_f32(load8(xs + offset), values);
      const Bf16x8 result = normalise(values, inv_rms[m], scale);
      store8(xs + offset, result);
      if (writer) store8(normed + offset, result);
    }
  }
  __syncthreads();
}

// With kNorm, x is computed first by every block into shared memory (norm_prologue).
template <int kM, typename Out, bool kNorm>
__global__ void __launch_bounds__(kThreads, 2)
    gemv_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w,
                const Out* __restrict__ bias, Out* __restrict__ out, int n, int k,
                GemvNormArgs norm) {
  extern __shared__ __align__(16) unsigned char gemv_shared[];
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
      if (c < n_vec) buffer[u] = load8_streaming(w_row + int64_t{c} * 8);
    }
  };

  // Before the wait (the kernel before may still be running): the first step's loads.
  Bf16x8 current[kChunk], next[kChunk];
  if (n_steps > 0) load_step(0, current);
  pdl_wait();
  pdl_launch_dependents();
  if constexpr (kNorm) {
    x = reinterpret_cast<bf16*>(gemv_shared);
    norm_prologue<kM>(norm, k, reinterpret_cast<bf16*>(gemv_shared));
  }

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
template <int kM, typename Out, bool kNorm>
int64_t plan_blocks(int64_t n) {
  static const int64_t resident_warps = [] {
    int device = 0, n_sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, gemv_kernel<kM, Out, kNorm>, kThreads, kNorm ? kGemvNormMaxBytes : 0));
    return int64_t{n_sms} * std::max(per_sm, 1) * kWarps;
  }();
  const int64_t rows_per_warp = ceil_div(n, resident_warps);
  return ceil_div(ceil_div(n, rows_per_warp), kWarps);
}

template <int kM, typename Out, bool kNorm>
void launch_gemv_typed(const void* x, const void* w, const void* bias, void* out, int64_t n,
                       int64_t k, const GemvNormArgs& norm, cudaStream_t stream) {
  const size_t shared_bytes = kNorm ? kM * k * sizeof(bf16) : 0;
  launch_pdl(gemv_kernel<kM, Out, kNorm>, dim3(plan_blocks<kM, Out, kNorm>(n)), dim3(kThreads),
             shared_bytes, stream, static_cast<const bf16*>(x), static_cast<const bf16*>(w),
             static_cast<const Out*>(bias), static_cast<Out*>(out), static_cast<int>(n),
             static_cast<int>(k), norm);
}

}  // namespace hadron::cuda::gemv
