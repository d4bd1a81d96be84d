// Fused qkv split + per-head q/k RMSNorm + RoPE + paged KV write.
// One warp per (token, head) of the n_heads + 2 n_kv_heads heads in a qkv row: q heads go to
// q_out, k heads to k_cache[slot], v heads to v_cache[slot]. Each lane loads and stores its
// kHeadDim / 32 consecutive elements as one vector (all pointers 16-byte aligned), where
// kHeadDim is head_dim rounded up to 64, 128 or 256 (kPadded where that rounds) and the lanes
// past head_dim idle; the
// normalised head is staged in shared memory so RoPE can read the partner of each element
// (d + rotary_dim/2 for neox, d ^ 1 for interleaved).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/qkv_rope.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4;

// kN consecutive bf16 (4, 8 or 16 bytes) in one load or store, converted to and from fp32.
template <int kN>
struct Packed;
template <>
struct Packed<2> {
  using Raw = uint32_t;
};
template <>
struct Packed<4> {
  using Raw = uint2;
};
template <>
struct Packed<8> {
  using Raw = uint4;
};
template <int kN>
__device__ __forceinline__ void load_f32(const bf16* p, float (&out)[kN]) {
  const auto raw = *reinterpret_cast<const typename Packed<kN>::Raw*>(p);
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}
template <int kN>
__device__ __forceinline__ void store_f32(bf16* p, const float (&in)[kN]) {
  typename Packed<kN>::Raw raw;
  auto* pairs = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) pairs[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
  *reinterpret_cast<typename Packed<kN>::Raw*>(p) = raw;
}

template <int kHeadDim, bool kPadded>
__global__ void __launch_bounds__(kWarps * 32) qkv_rope_store_kernel(QkvRopeStoreArgs args) {
  constexpr int kPerLane = kHeadDim / 32;
  __shared__ float staged[kWarps][kHeadDim];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t heads_per_token = args.n_heads + 2 * args.n_kv_heads;
  const int64_t item = blockIdx.x * int64_t{kWarps} + warp;
  const bool in_range = item < args.n_tokens * heads_per_token;
  const int64_t head_dim = kPadded ? args.head_dim : kHeadDim;  // a multiple of kPerLane
  const bool in_head = lane * kPerLane < head_dim;
  const int64_t t = item / heads_per_token, head = item % heads_per_token;
  const QkvHead h = qkv_head(args, head);
  // Read before waiting on the kernel that wrote qkv: the norm weights (constants), positions
  // and slots (the step's inputs, in place since its first kernels: launch.cuh). The cos/sin
  // row, whose address needs the position, is read after the wait beside qkv, so that one
  // round trip, not two, precedes the wait (the kernel before may end before a block of this
  // one even starts; docs/performance-notes.md, "Small kernels").
  float norm_weight[kPerLane] = {};
  if (in_range && in_head && h.norm != nullptr)
    load_f32<kPerLane>(h.norm + lane * kPerLane, norm_weight);
  const int32_t slot = in_range ? args.slot_mapping[t] : -1;
  HeadRotation<kPerLane> rotation{};
  const bool rotated = in_range && (h.is_q || h.is_k);
  const int64_t position = rotated ? args.positions[t] : 0;
  pdl_wait();
  pdl_launch_dependents();
  if (!in_range) return;
  if (!h.is_q && slot < 0) return;  // padding token: no cache write

  const bf16* src = static_cast<const bf16*>(args.qkv) + (t * heads_per_token + head) * head_dim;
  float x[kPerLane] = {};
  if (in_head) load_f32<kPerLane>(src + lane * kPerLane, x);
  if (rotated)
    rotation = head_rotation<kPerLane>(args.cos_sin, position, args.rotary_dim, args.neox, lane);

  bf16* dst = qkv_head_dst(args, h, head, t, slot);
  if (!h.is_q && !h.is_k) {  // v: a plain copy
    if (in_head) store_f32<kPerLane>(dst + lane * kPerLane, x);
    return;
  }
  float result[kPerLane];
  norm_rope_head<kPerLane>(x, h.norm != nullptr, norm_weight, args.eps, rotation, args.rotary_dim,
                           head_dim, staged[warp], lane, result);
  if (in_head) store_f32<kPerLane>(dst + lane * kPerLane, result);
}

template <int kHeadDim>
void launch_with(const QkvRopeStoreArgs& args, cudaStream_t stream) {
  const int64_t items = args.n_tokens * (args.n_heads + 2 * args.n_kv_heads);
  const auto kernel = args.head_dim == kHeadDim ? qkv_rope_store_kernel<kHeadDim, false>
                                                : qkv_rope_store_kernel<kHeadDim, true>;
  launch_pdl(kernel, dim3(ceil_div(items, kWarps)), dim3(kWarps * 32), 0, stream, args);
}

}  // namespace

void launch_qkv_rope_store(const QkvRopeStoreArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  for (const void* p :
       {args.qkv, args.q_norm, args.k_norm, static_cast<const void*>(args.k_cache),
        static_cast<const void*>(args.v_cache), static_cast<const void*>(args.q_out)})
    if (const int misalignment = static_cast<int>(reinterpret_cast<uintptr_t>(p) % 16))
      fail_dispatch("qkv_rope_store tensor address mod 16", misalignment, {0});
  switch (attention_tile_dim(args.head_dim)) {
    case 64:
      return launch_with<64>(args, stream);
    case 128:
      return launch_with<128>(args, stream);
    default:
      return launch_with<256>(args, stream);
  }
}

}  // namespace hadron::cuda
