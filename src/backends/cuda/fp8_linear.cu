// The FP8 linear's ops on CUDA (ops/backend.h; ADR 0014), as plain kernels that compute what the
// CPU reference computes: activation quantization with one block per (token, group), and the
// scaled product with one thread per output, its k segments summed in fp32. A correct baseline
// for the wgmma kernels (FP8 tensor cores, TMA, fused activation quantization) that replace it.
#include <cuda_fp8.h>

#include "backends/cuda/fp8_kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kQuantThreads = 128;

__device__ __forceinline__ float load_any(const void* p, int64_t i, bool is_bf16) {
  return is_bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i])
                 : static_cast<const float*>(p)[i];
}

__device__ __forceinline__ float e4m3_to_float(uint8_t code) {
  __nv_fp8_e4m3 value;
  value.__x = code;
  return static_cast<float>(value);
}

// grid (n_groups, T): amax of the group, its scale, then the codes.
__global__ void quantize_fp8_kernel(const void* x, bool x_bf16, int64_t k, int64_t group,
                                    bool ue8m0, uint8_t* codes, float* scales,
                                    int64_t scale_stride_t, int64_t scale_stride_g) {
  const int64_t t = blockIdx.y, g0 = blockIdx.x * group, g1 = min(k, g0 + group);
  float amax = 0.0f;
  for (int64_t i = g0 + threadIdx.x; i < g1; i += blockDim.x)
    amax = fmaxf(amax, fabsf(load_any(x, t * k + i, x_bf16)));
  __shared__ float partial[kQuantThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = amax;
  __syncthreads();
  amax = 0.0f;
  for (int w = 0; w < kQuantThreads / 32; ++w) amax = fmaxf(amax, partial[w]);
  float scale = fmaxf(amax, 1e-10f) / 448.0f;  // kFp8AmaxFloor, kFp8E4m3Max
  if (ue8m0) scale = exp2f(ceilf(log2f(scale)));
  for (int64_t i = g0 + threadIdx.x; i < g1; i += blockDim.x)
    codes[t * k + i] =
        __nv_cvt_float_to_fp8(load_any(x, t * k + i, x_bf16) / scale, __NV_SATFINITE, __NV_E4M3);
  if (threadIdx.x == 0) scales[t * scale_stride_t + blockIdx.x * scale_stride_g] = scale;
}

// grid (ceil(N / 128), T): out[t, j] for 128 consecutive j.
__global__ void fp8_linear_kernel(Fp8LinearArgs a) {
  const int64_t t = blockIdx.y, j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= a.n) return;
  const int64_t w_scale_cols = (a.k + a.block_k - 1) / a.block_k;
  float acc = 0.0f;
  for (int64_t s0 = 0; s0 < a.k; s0 += a.segment) {
    const int64_t s1 = min(a.k, s0 + a.segment);
    float partial = 0.0f;
    for (int64_t i = s0; i < s1; ++i)
      partial += e4m3_to_float(a.x_codes[t * a.k + i]) * e4m3_to_float(a.w_codes[j * a.k + i]);
    const float x_scale = a.x_scales[t * a.x_scale_stride_t + s0 / a.group * a.x_scale_stride_g];
    acc += partial * (x_scale * a.w_scales[j / a.block_n * w_scale_cols + s0 / a.block_k]);
  }
  if (a.bias != nullptr) acc += load_any(a.bias, j, a.bias_bf16);
  if (a.out_bf16)
    static_cast<__nv_bfloat16*>(a.out)[t * a.n + j] = __float2bfloat16(acc);
  else
    static_cast<float*>(a.out)[t * a.n + j] = acc;
}

}  // namespace

void launch_quantize_fp8(const void* x, bool x_bf16, int64_t t_count, int64_t k, int64_t group,
                         bool ue8m0, uint8_t* codes, float* scales, int64_t scale_stride_t,
                         int64_t scale_stride_g, cudaStream_t stream) {
  quantize_fp8_kernel<<<dim3(ceil_div(k, group), t_count), kQuantThreads, 0, stream>>>(
      x, x_bf16, k, group, ue8m0, codes, scales, scale_stride_t, scale_stride_g);
}

void launch_fp8_linear(const Fp8LinearArgs& args, cudaStream_t stream) {
  fp8_linear_kernel<<<dim3(ceil_div(args.n, 128), args.t_count), 128, 0, stream>>>(args);
}

}  // namespace hadron::cuda
