// FP8 (e4m3fn) weights and activations for the FP8 linear (ops: Backend::fp8_linear), in the
// layouts DeepSeek-V3's block-scaled checkpoints and the per-channel toolkits write, which a Hopper
// wgmma kernel reads directly (ADR 0014):
//   weight  w[n, k] = q[n, k] * scales[n / block_n, k / block_k]   (q row-major [N, K], K-major)
//   input   x[t, k] = q[t, k] * scales[t, k / group]               (per token, per group of k)
// Block-scaled: block_n = block_k = 128 and group = 128 (a k block of the weight is one group of
// the activations, so the block product is one f32 partial sum scaled once). Per channel:
// block_n = 1, block_k = K with per-token activations (group = K). Per tensor: block_n = N,
// block_k = K.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/tensor.h"

namespace hadron {

inline constexpr float kFp8E4m3Max = 448.0f;
// The activation group and weight block of DeepSeek-V3, Qwen3-FP8 and their kernels.
inline constexpr int64_t kFp8Group = 128;
// Smallest amax a scale is computed from, so that an all-zero group has a finite scale (vLLM's
// per-token-group quantization uses the same floor).
inline constexpr float kFp8AmaxFloor = 1e-10f;

struct Fp8Weight {
  Tensor q;       // F8_E4M3 [N, K], contiguous
  Tensor scales;  // F32 [ceil(N / block_n), ceil(K / block_k)], contiguous: the multipliers
  int64_t block_n = 0;
  int64_t block_k = 0;
  // How activations meeting this weight are quantized (by the model's projection helper):
  // per token in groups of act_group columns, with power-of-two scales when ue8m0
  // (quantization_config scale_fmt "ue8m0").
  int64_t act_group = kFp8Group;
  bool ue8m0 = false;

  bool defined() const { return q.defined(); }
};

struct Fp8Activations {
  Tensor q;  // F8_E4M3 [T, K], contiguous
  // F32 [T, ceil(K / group)], any strides: a kernel that wants them column-major (TMA reads
  // of one k block's scales for consecutive tokens) gets a view with strides {1, T_padded}.
  Tensor scales;
  int64_t group = kFp8Group;
};

// The scale of a group whose largest magnitude is amax: amax / 448, or with ue8m0 the power of
// two at or above it (2^ceil(log2(amax / 448)), DeepSeek's fast_round_scale), so that q * s never
// exceeds 448 and the scale is an exponent alone.
inline float fp8_scale_for(float amax, bool ue8m0) {
  const float scale = std::fmax(amax, kFp8AmaxFloor) / kFp8E4m3Max;
  return ue8m0 ? std::exp2(std::ceil(std::log2(scale))) : scale;
}

}  // namespace hadron
