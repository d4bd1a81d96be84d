// Launchers of the FP8 linear's plain kernels (fp8_linear.cu); CudaBackend validates, they
// launch on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace hadron::cuda {

// x: [T, K] bf16 or f32; codes: [T, K] e4m3; scales[t * stride_t + g * stride_g], g < ceil(K /
// group).
void launch_quantize_fp8(const void* x, bool x_bf16, int64_t t_count, int64_t k, int64_t group,
                         bool ue8m0, uint8_t* codes, float* scales, int64_t scale_stride_t,
                         int64_t scale_stride_g, cudaStream_t stream);

// out[t, j] over [T, N] as Backend::fp8_linear defines it; segment = min(group, block_k, K).
struct Fp8LinearArgs {
  const uint8_t *x_codes, *w_codes;
  const float *x_scales, *w_scales;
  int64_t x_scale_stride_t, x_scale_stride_g;
  const void* bias;  // [N] or null
  bool bias_bf16;
  void* out;
  bool out_bf16;
  int64_t t_count, n, k, group, block_n, block_k, segment;
};

void launch_fp8_linear(const Fp8LinearArgs& args, cudaStream_t stream);

}  // namespace hadron::cuda
