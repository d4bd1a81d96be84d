// Reading expert weights in the MoE decode kernels (moe_experts.cu, moe_decode.cu,
// moe_mxfp4_decode.cu): 16-byte vectors streamed past L1, and MXFP4 vectors (32 e2m1 codes; one
// e8m0 scale byte each) decoded in registers. Included by .cu files only.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/vec.cuh"

namespace hadron::cuda {

// Weights are read once per step: stream them past L1, and first out of L2.
__device__ __forceinline__ uint4 load_weights(const uint4* p) {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(policy));
  return v;
}

// 2^(scale - 127) * 2^14: an e8m0 scale times the 2^14 that decode8's values lack.
__device__ __forceinline__ float mxfp4_scale(uint8_t scale) {
  return scale <= 240 ? __int_as_float((scale + 14) << 23)
                      : __int_as_float(scale << 23) * 16384.0f;  // 255 (NaN in e8m0): inf
}

// Codes i and i + 4 (i < 4) of a word of 8 e2m1 codes (the low nibble first) as the bits of
// a half2, each its value * 2^-14: an e2m1 code (sign, 2 exponent bits, 1 mantissa bit) placed
// in an fp16's sign, low exponent and top mantissa bits is exactly that, zero and 0.5 included
// (fp16 subnormals), so two codes take two shifts and masks.
__device__ __forceinline__ uint32_t mxfp4_pair_bits(uint32_t word, int i) {
  // Bits 4i..4i+2 to 9..11 (and 16 up), bit 4i+3 to 15 (and 31).
  const uint32_t magnitude = i < 3 ? word << (9 - 4 * i) : word >> 3;
  const uint32_t sign = word << (12 - 4 * i);
  return (magnitude & 0x0E000E00u) | (sign & 0x80008000u);
}

// Values 8 * v .. 8 * v + 7 of a chunk (MXFP4: times 2^-14, see mxfp4_pair_bits).
template <bool kMxfp4>
__device__ __forceinline__ void decode8(const uint4& chunk, int v, float (&out)[8]) {
  if constexpr (!kMxfp4) {
    to_f32(reinterpret_cast<const Bf16x8&>(chunk), out);
  } else {
    const uint32_t word = v == 0 ? chunk.x : v == 1 ? chunk.y : v == 2 ? chunk.z : chunk.w;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t bits = mxfp4_pair_bits(word, i);
      __half2_raw raw;
      raw.x = static_cast<unsigned short>(bits & 0xFFFFu);
      raw.y = static_cast<unsigned short>(bits >> 16);
      const float2 f = __half22float2(__half2(raw));
      out[i] = f.x;
      out[i + 4] = f.y;
    }
  }
}

}  // namespace hadron::cuda
