// 16-byte vectors of 8 bf16 and conversions to fp32, shared by the element-wise kernels.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace hadron::cuda {

using bf16 = __nv_bfloat16;

struct alignas(16) Bf16x8 {
  __nv_bfloat162 pairs[4];
};

// For each of `count` items c a thread owns (threadIdx.x, + kThreads, ...): load(c, values)
// then use(c, values) in order, kBatch loads issued before the first is used. Staging inputs
// written by the kernel before (in L2) this way costs one round trip per batch instead of one
// per item: a plain loop that stores each item to shared memory may not start the next load
// before that store, for all the compiler knows about aliasing.
template <int kThreads, int kBatch, typename Values, typename Load, typename Use>
__device__ __forceinline__ void batched(int count, const Load& load, const Use& use) {
  for (int c0 = threadIdx.x; c0 < count; c0 += kBatch * kThreads) {
    Values values[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (c0 + b * kThreads < count) load(c0 + b * kThreads, values[b]);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (c0 + b * kThreads < count) use(c0 + b * kThreads, values[b]);
  }
}

__device__ __forceinline__ Bf16x8 load8(const bf16* p) {
  return *reinterpret_cast<const Bf16x8*>(p);
}
// For weights read once per step: streamed past L1 (activations stay there), evict-first.
__device__ __forceinline__ Bf16x8 load8_streaming(const bf16* p) {
  const int4 v = __ldcs(reinterpret_cast<const int4*>(p));
  return *reinterpret_cast<const Bf16x8*>(&v);
}
// Asks L2 for the line holding p; returns no data (the load that follows reads what L2 holds).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
__device__ __forceinline__ void store8(bf16* p, const Bf16x8& v) {
  *reinterpret_cast<Bf16x8*>(p) = v;
}
__device__ __forceinline__ void to_f32(const Bf16x8& v, float (&out)[8]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(v.pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ Bf16x8 from_f32(const float (&in)[8]) {
  Bf16x8 v;
#pragma unroll
  for (int i = 0; i < 4; ++i) v.pairs[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
  return v;
}

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}
__device__ __forceinline__ float warp_max(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace hadron::cuda
