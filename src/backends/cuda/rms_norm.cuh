// The steps of RMSNorm shared by rms_norm.cu and the GEMV's norm prologue (gemv.cuh), so that
// both round alike and the fused and the separate paths agree bit for bit.
#pragma once

#include "backends/cuda/vec.cuh"

namespace hadron::cuda {

// residual + x rounded to the bf16 the residual stream holds; values: that sum in fp32 (what
// the norm normalises).
__device__ __forceinline__ Bf16x8 residual_add(const Bf16x8& residual, const Bf16x8& x,
                                               float (&values)[8]) {
  float sum[8], other[8];
  to_f32(residual, sum);
  to_f32(x, other);
#pragma unroll
  for (int e = 0; e < 8; ++e) sum[e] += other[e];
  const Bf16x8 stream = from_f32(sum);
  to_f32(stream, values);
  return stream;
}

// 1 / rms(row) of kM rows of `width` values from each thread's partial sums of squares; every
// thread of the kThreads-thread block calls it and gets the results.
template <int kThreads, int kM>
__device__ __forceinline__ void block_inv_rms(const float (&sum_squares)[kM], int64_t width,
                                              float eps, float (&inv_rms)[kM]) {
  constexpr int kWarps = kThreads / 32;
  __shared__ float warp_sums[kM][kWarps];
  __shared__ float result[kM];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int m = 0; m < kM; ++m) {
    const float total = warp_sum(sum_squares[m]);
    if (lane == 0) warp_sums[m][warp] = total;
  }
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      const float total = warp_sum(lane < kWarps ? warp_sums[m][lane] : 0.0f);
      if (lane == 0) result[m] = rsqrtf(total / static_cast<float>(width) + eps);
    }
  }
  __syncthreads();
#pragma unroll
  for (int m = 0; m < kM; ++m) inv_rms[m] = result[m];
}

// values * inv_rms * weight, rounded to bf16.
__device__ __forceinline__ Bf16x8 normalise(const float (&values)[8], float inv_rms,
                                            const Bf16x8& weight) {
  float scale[8], result[8];
  to_f32(weight, scale);
#pragma unroll
  for (int e = 0; e < 8; ++e) result[e] = values[e] * inv_rms * scale[e];
  return from_f32(result);
}

}  // namespace hadron::cuda
