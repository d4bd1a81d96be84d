// The per-head arithmetic of qkv_rope_store (the q/k RMSNorm over head_dim, then RoPE), shared
// by qkv_rope_store.cu and the decode GEMM's qkv epilogue (decode_gemm.cu) so both round alike.
// One warp a head of kPerLane * 32 values; lane l holds elements [l kPerLane, (l + 1) kPerLane).
// Included by .cu files only.
#pragma once

#include <cstdint>

#include "backends/cuda/kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {

// Element d's rotation: cos and sin of its pair, the partner it mixes with, and whether it is
// the pair's first (x cos - partner sin) or second (x cos + partner sin).
template <int kPerLane>
struct HeadRotation {
  float cosine[kPerLane], sine[kPerLane];
  int partner[kPerLane];
  bool first[kPerLane];
};

// The rotation of one lane's elements at `position` (cos_sin: [max_pos, rotary_dim], cosines
// then sines); elements past rotary_dim are left as they are.
template <int kPerLane>
__device__ __forceinline__ HeadRotation<kPerLane> head_rotation(const float* cos_sin,
                                                                int64_t position,
                                                                int64_t rotary_dim, bool neox,
                                                                int lane) {
  HeadRotation<kPerLane> r;
  const int64_t half = rotary_dim / 2;
  const float* rope_row = cos_sin + position * rotary_dim;
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) {
    const int d = lane * kPerLane + e;
    if (d >= rotary_dim) continue;
    int pair;
    if (neox) {
      r.first[e] = d < half;
      pair = r.first[e] ? d : d - half;
      r.partner[e] = r.first[e] ? d + half : d - half;
    } else {
      r.first[e] = (d & 1) == 0;
      pair = d / 2;
      r.partner[e] = d ^ 1;
    }
    r.cosine[e] = rope_row[pair];
    r.sine[e] = rope_row[half + pair];
  }
  return r;
}

// A q or k head: x (one lane's values) normalised over the head with norm_weight when `norm`,
// then rotated, into result. staged: the warp's kPerLane * 32 floats of shared memory.
// head_dim <= kPerLane * 32: the lanes past it hold zeros.
template <int kPerLane>
__device__ __forceinline__ void norm_rope_head(float (&x)[kPerLane], bool norm,
                                               const float (&norm_weight)[kPerLane], float eps,
                                               const HeadRotation<kPerLane>& rotation,
                                               int64_t rotary_dim, int64_t head_dim, float* staged,
                                               int lane, float (&result)[kPerLane]) {
  if (norm) {
    float sum_squares = 0;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) sum_squares += x[e] * x[e];
    const float inv_rms = rsqrtf(warp_sum(sum_squares) / static_cast<float>(head_dim) + eps);
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) x[e] = x[e] * inv_rms * norm_weight[e];
  }
  __syncwarp();  // the warp's previous head has been read out of staged
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) staged[lane * kPerLane + e] = x[e];
  __syncwarp();
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) {
    result[e] = x[e];
    if (lane * kPerLane + e < rotary_dim) {
      const float other = staged[rotation.partner[e]];
      result[e] = rotation.first[e] ? x[e] * rotation.cosine[e] - other * rotation.sine[e]
                                    : x[e] * rotation.cosine[e] + other * rotation.sine[e];
    }
  }
}

// Which of q, k and v head `head` of a qkv row is, and the norm it takes (q_norm, k_norm or
// none).
struct QkvHead {
  bool is_q, is_k;  // else v
  const bf16* norm;
};

__device__ __forceinline__ QkvHead qkv_head(const QkvRopeStoreArgs& a, int64_t head) {
  const bool is_q = head < a.n_heads, is_k = !is_q && head < a.n_heads + a.n_kv_heads;
  return {is_q, is_k, static_cast<const bf16*>(is_q ? a.q_norm : is_k ? a.k_norm : nullptr)};
}

// Where token t's head goes: q_out for q, the cache row at slot (>= 0) for k and v.
__device__ __forceinline__ bf16* qkv_head_dst(const QkvRopeStoreArgs& a, const QkvHead& h,
                                              int64_t head, int64_t t, int32_t slot) {
  if (h.is_q) return static_cast<bf16*>(a.q_out) + (t * a.n_heads + head) * a.head_dim;
  const int64_t kv_head = h.is_k ? head - a.n_heads : head - a.n_heads - a.n_kv_heads;
  return static_cast<bf16*>(h.is_k ? a.k_cache : a.v_cache) +
         (int64_t{slot} * a.n_kv_heads + kv_head) * a.head_dim;
}

}  // namespace hadron::cuda
