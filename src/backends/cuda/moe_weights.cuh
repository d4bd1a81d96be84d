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

// An e8m0 scale byte's 2^(scale - 127), exact for every byte: 0 gives the subnormal 2^-127,
// 255 (NaN in e8m0) infinity. For sums that take mxfp4_pairs' 2^14 once at the end; a
// byte-0 block's products then fall below fp32's normal range and keep fewer bits.
__device__ __forceinline__ float mxfp4_scale_unbiased(uint8_t scale) {
  return __int_as_float(max(int{scale} << 23, 0x00400000));
}

// 2^(scale - 127) * 2^14: an e8m0 scale times the 2^14 that decode8's values lack (the product
// is exact, bit for bit what adding 14 to the exponent gives, for all 256 bytes).
__device__ __forceinline__ float mxfp4_scale(uint8_t scale) {
  return mxfp4_scale_unbiased(scale) * 16384.0f;
}

// The codes i and i + 4 (i < 4) of a word of 8 e2m1 codes (the low nibble first) as the bits
// of a half2 in pairs[i], each its value * 2^-14: an e2m1 code (sign, 2 exponent bits, 1
// mantissa bit) placed in an fp16's sign, low exponent and top mantissa bits (9..11 and 15) is
// exactly that, zero and 0.5 included (fp16 subnormals). Code j's sign must land 6 bits above
// its magnitude's lowest bit, 3 further than in the word, so the word rotated by 3 supplies
// the signs: z_even is the word with the signs of codes 0, 2, 4 and 6 moved to bits 4j + 6
// (where the odd codes' top magnitude bits were), z_odd likewise for codes 1, 3, 5 and 7 (code
// 7's wrapping to bit 2); one shift (a rotation for pair 3) and one mask then give each pair.
// 11 operations for the four pairs, against 16 shifting sign and magnitude apart; checked equal
// to that form for all 2^32 words.
__device__ __forceinline__ void mxfp4_pairs(uint32_t word, uint32_t (&pairs)[4]) {
  constexpr uint32_t kPair = 0x8E008E00u;  // bits 9..11 and 15 of both halves
  const uint32_t rotated = __funnelshift_l(word, word, 3);
  const uint32_t z_even = (rotated & 0x40404040u) | (word & ~0x40404040u);
  const uint32_t z_odd = (rotated & 0x04040404u) | (word & ~0x04040404u);
  pairs[0] = (z_even << 9) & kPair;
  pairs[1] = (z_odd << 5) & kPair;
  pairs[2] = (z_even << 1) & kPair;
  pairs[3] = __funnelshift_r(z_odd, z_odd, 3) & kPair;
}

// Values 8 * v .. 8 * v + 7 of a chunk (MXFP4: times 2^-14, see mxfp4_pairs).
template <bool kMxfp4>
__device__ __forceinline__ void decode8(const uint4& chunk, int v, float (&out)[8]) {
  if constexpr (!kMxfp4) {
    to_f32(reinterpret_cast<const Bf16x8&>(chunk), out);
  } else {
    const uint32_t word = v == 0 ? chunk.x : v == 1 ? chunk.y : v == 2 ? chunk.z : chunk.w;
    uint32_t pairs[4];
    mxfp4_pairs(word, pairs);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t bits = pairs[i];
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
