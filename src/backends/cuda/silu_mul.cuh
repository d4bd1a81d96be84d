// SiLU-and-mul, shared by silu_mul.cu and the GEMV's prologue and pair output (gemv.cuh), so
// that the fused and the separate paths round alike.
#pragma once

#include "backends/cuda/vec.cuh"

namespace hadron::cuda {

// silu(gate) * up in fp32 (before rounding to bf16).
__device__ __forceinline__ float silu_mul1(float gate, float up) {
  return gate / (1.0f + __expf(-gate)) * up;
}

// silu(gate) * up in fp32, rounded to bf16.
__device__ __forceinline__ Bf16x8 silu_mul8(const Bf16x8& gate_bits, const Bf16x8& up_bits) {
  float gate[8], up[8], result[8];
  to_f32(gate_bits, gate);
  to_f32(up_bits, up);
#pragma unroll
  for (int e = 0; e < 8; ++e) result[e] = silu_mul1(gate[e], up[e]);
  return from_f32(result);
}

}  // namespace hadron::cuda
