// Fused qkv split + per-head q/k RMSNorm + RoPE + paged KV write.
// One warp per (token, head) of the n_heads + 2 n_kv_heads heads in a qkv row: q heads go to
// q_out, k heads to k_cache[slot], v heads to v_cache[slot]. Each lane holds head_dim / 32
// consecutive elements; the normalised head is staged in shared memory so RoPE can read the
// partner of each element (d + rotary_dim/2 for neox, d ^ 1 for interleaved).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4;

template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) qkv_rope_store_kernel(QkvRopeStoreArgs args) {
  constexpr int kPerLane = kHeadDim / 32;
  __shared__ float staged[kWarps][kHeadDim];
  pdl_wait();
  pdl_launch_dependents();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t heads_per_token = args.n_heads + 2 * args.n_kv_heads;
  const int64_t item = blockIdx.x * int64_t{kWarps} + warp;
  if (item >= args.n_tokens * heads_per_token) return;
  const int64_t t = item / heads_per_token, head = item % heads_per_token;
  const bool is_q = head < args.n_heads, is_k = !is_q && head < args.n_heads + args.n_kv_heads;
  const int32_t slot = args.slot_mapping[t];
  if (!is_q && slot < 0) return;  // padding token: no cache write

  const bf16* src = static_cast<const bf16*>(args.qkv) + (t * heads_per_token + head) * kHeadDim;
  float x[kPerLane];
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) x[e] = __bfloat162float(src[lane * kPerLane + e]);

  bf16* dst;
  if (is_q) {
    dst = static_cast<bf16*>(args.q_out) + (t * args.n_heads + head) * kHeadDim;
  } else {
    const int64_t kv_head = is_k ? head - args.n_heads : head - args.n_heads - args.n_kv_heads;
    bf16* cache = static_cast<bf16*>(is_k ? args.k_cache : args.v_cache);
    dst = cache + (int64_t{slot} * args.n_kv_heads + kv_head) * kHeadDim;
  }
  if (!is_q && !is_k) {  // v: a plain copy
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) dst[lane * kPerLane + e] = __float2bfloat16(x[e]);
    return;
  }
  const bf16* norm = static_cast<const bf16*>(is_q ? args.q_norm : args.k_norm);
  if (norm != nullptr) {
    float sum_squares = 0;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) sum_squares += x[e] * x[e];
    const float inv_rms = rsqrtf(warp_sum(sum_squares) / kHeadDim + args.eps);
#pragma unroll
    for (int e = 0; e < kPerLane; ++e)
      x[e] = x[e] * inv_rms * __bfloat162float(norm[lane * kPerLane + e]);
  }
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) staged[warp][lane * kPerLane + e] = x[e];
  __syncwarp();
  const int64_t half = args.rotary_dim / 2;
  const float* rope_row = args.cos_sin + int64_t{args.positions[t]} * args.rotary_dim;
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) {
    const int d = lane * kPerLane + e;
    float value = x[e];
    if (d < args.rotary_dim) {
      int pair, partner;
      bool first;
      if (args.neox) {
        first = d < half;
        pair = first ? d : d - half;
        partner = first ? d + half : d - half;
      } else {
        first = (d & 1) == 0;
        pair = d / 2;
        partner = d ^ 1;
      }
      const float cos = rope_row[pair], sin = rope_row[half + pair];
      const float other = staged[warp][partner];
      value = first ? value * cos - other * sin : value * cos + other * sin;
    }
    dst[d] = __float2bfloat16(value);
  }
}

template <int kHeadDim>
void launch_with(const QkvRopeStoreArgs& args, cudaStream_t stream) {
  const int64_t items = args.n_tokens * (args.n_heads + 2 * args.n_kv_heads);
  launch_pdl(qkv_rope_store_kernel<kHeadDim>, dim3(ceil_div(items, kWarps)), dim3(kWarps * 32), 0,
             stream, args);
}

}  // namespace

void launch_qkv_rope_store(const QkvRopeStoreArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  switch (args.head_dim) {
    case 64: return launch_with<64>(args, stream);
    case 128: return launch_with<128>(args, stream);
    case 256: return launch_with<256>(args, stream);
    default: fail_dispatch("qkv_rope_store head_dim", static_cast<int>(args.head_dim), {64, 128, 256});
  }
}

}  // namespace hadron::cuda
