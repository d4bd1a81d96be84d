// Decode attention (one query per sequence) over the paged cache: split-KV flash-decoding.
//
// Grid (split, kv_head, seq). A CTA serves all query heads of one KV head (the GQA group) for
// one chunk of the context, so each K/V vector is read once per group. head_dim / 8 lanes
// share a key (16-byte loads each), so a warp streams 32 / (head_dim / 8) keys at a time,
// kUnroll groups of them in flight; every (warp, key slot) keeps its own online-softmax
// state, merged in shared memory at the end. With one split the CTA writes the output;
// otherwise it writes (max, sum, unnormalised O) and a combine kernel merges the splits. A
// head's sink logit joins the denominator where the output is written (once per head).
#include <algorithm>
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4, kThreads = kWarps * 32, kUnroll = 4;
// One unrolled step of a CTA covers 32 keys (kWarps x keys per warp x kUnroll at head_dim
// 128); fewer keys per split would leave warps idle.
constexpr int kMinKeysPerSplit = 32;

// The number of splits depends only on the batch's shape (never on context lengths), so a
// captured graph serves any contexts; each sequence divides its own keys among them.
int plan_n_splits(const AttentionArgs& args, int n_sms) {
  const int ctas = std::max(1, args.n_seqs * args.n_kv_heads);
  return std::max(1, static_cast<int>(ceil_div(2 * n_sms, ctas)));
}

// Keys per split for a sequence of `keys` keys over n_splits splits; splits past the last
// key are empty (split 0 always runs, so an empty context still writes its zero output).
__device__ __forceinline__ int split_chunk(int keys, int n_splits) {
  return max(kMinKeysPerSplit, (keys + n_splits - 1) / n_splits);
}
__device__ __forceinline__ int active_splits(int keys, int chunk) {
  return max(1, (keys + chunk - 1) / chunk);
}

constexpr float kLog2e = 1.4426950408889634f;

// The head's sink logit in the exp2 domain, or -inf without sinks (adding exp2(-inf) = 0). It
// joins the denominator once: where the output is written, never per split.
__device__ __forceinline__ float sink_log2(const AttentionArgs& args, int head) {
  return args.sinks != nullptr
             ? __bfloat162float(static_cast<const bf16*>(args.sinks)[head]) * kLog2e
             : -INFINITY;
}

template <int kD, int kG>
__global__ void __launch_bounds__(kThreads)
    attention_decode_kernel(AttentionArgs args, float scale_log2, float* partial) {
  constexpr int kLanesPerKey = kD / 8, kKeysPerWarp = 32 / kLanesPerKey;
  constexpr int kSlots = kWarps * kKeysPerWarp;  // keys in flight per CTA per unroll step
  __shared__ float slot_o[kSlots][kG][kD];
  __shared__ float slot_m[kSlots][kG], slot_l[kSlots][kG];

  const int split = blockIdx.x, kv_head = blockIdx.y, seq = blockIdx.z;
  const int group_size = args.n_heads / args.n_kv_heads;
  const int kv_len = args.seq_lens_kv[seq];
  const int first = args.sliding_window > 0 ? max(0, kv_len - args.sliding_window) : 0;
  // This sequence's keys in chunks of at least kMinKeysPerSplit; the splits past its last
  // key return at once and the combine pass skips them.
  const int chunk = split_chunk(kv_len - first, gridDim.x);
  if (split >= active_splits(kv_len - first, chunk)) return;
  const int begin = first + split * chunk, end = min(kv_len, begin + chunk);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int slot_idx = warp * kKeysPerWarp + lane / kLanesPerKey, sub = lane % kLanesPerKey;
  const int token = args.cu_seqlens_q[seq];
  const bf16* q = static_cast<const bf16*>(args.q) +
                  (int64_t{token} * args.n_heads + kv_head * group_size) * kD + sub * 8;
  const bf16* k_cache = static_cast<const bf16*>(args.k_cache) + kv_head * kD + sub * 8;
  const bf16* v_cache = static_cast<const bf16*>(args.v_cache) + kv_head * kD + sub * 8;
  const int32_t* block_table = args.block_tables + int64_t{seq} * args.max_blocks_per_seq;

  float qf[kG][8], o[kG][8], m[kG], l[kG];
#pragma unroll
  for (int g = 0; g < kG; ++g) {
    if (g < group_size) {
      to_f32(load8(q + g * kD), qf[g]);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) qf[g][e] = 0;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      qf[g][e] *= scale_log2;
      o[g][e] = 0;
    }
    m[g] = -FLT_MAX;
    l[g] = 0;
  }

  // Uniform trip count per warp (the shuffles below need every lane).
  for (int base = begin + warp * kKeysPerWarp; base < end; base += kSlots * kUnroll) {
    Bf16x8 kv[kUnroll], vv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int key = base + lane / kLanesPerKey + u * kSlots;
      if (key < end) {
        const int64_t slot = int64_t{block_table[key / args.block_size]} * args.block_size +
                             key % args.block_size;
        kv[u] = load8(k_cache + slot * args.n_kv_heads * kD);
        vv[u] = load8(v_cache + slot * args.n_kv_heads * kD);
      } else {
        kv[u] = Bf16x8{};
        vv[u] = Bf16x8{};
      }
    }
    float s[kUnroll][kG];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[8];
      to_f32(kv[u], kf);
      const bool valid = base + lane / kLanesPerKey + u * kSlots < end;
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        float dot = 0;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot += qf[g][e] * kf[e];
#pragma unroll
        for (int offset = kLanesPerKey / 2; offset > 0; offset >>= 1)
          dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        s[u][g] = valid ? dot : -INFINITY;
      }
    }
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      float new_max = m[g];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) new_max = fmaxf(new_max, s[u][g]);
      const float rescale = exp2f(m[g] - new_max);
      m[g] = new_max;
      l[g] *= rescale;
#pragma unroll
      for (int e = 0; e < 8; ++e) o[g][e] *= rescale;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const float p = exp2f(s[u][g] - new_max);
        float vf[8];
        to_f32(vv[u], vf);
        l[g] += p;
#pragma unroll
        for (int e = 0; e < 8; ++e) o[g][e] += p * vf[e];
      }
    }
  }

#pragma unroll
  for (int g = 0; g < kG; ++g) {
#pragma unroll
    for (int e = 0; e < 8; ++e) slot_o[slot_idx][g][sub * 8 + e] = o[g][e];
    if (sub == 0) {
      slot_m[slot_idx][g] = m[g];
      slot_l[slot_idx][g] = l[g];
    }
  }
  __syncthreads();
  const int n_splits = gridDim.x;
  for (int idx = threadIdx.x; idx < group_size * kD; idx += kThreads) {
    const int g = idx / kD, d = idx % kD;
    const int head = kv_head * group_size + g;
    const float sink = n_splits == 1 ? sink_log2(args, head) : -INFINITY;
    float max_all = fmaxf(-FLT_MAX, sink);
#pragma unroll
    for (int sl = 0; sl < kSlots; ++sl) max_all = fmaxf(max_all, slot_m[sl][g]);
    float sum = exp2f(sink - max_all), acc = 0;
#pragma unroll
    for (int sl = 0; sl < kSlots; ++sl) {
      const float w = exp2f(slot_m[sl][g] - max_all);
      sum += slot_l[sl][g] * w;
      acc += slot_o[sl][g][d] * w;
    }
    if (n_splits == 1) {
      static_cast<bf16*>(args.out)[(int64_t{token} * args.n_heads + head) * kD + d] =
          __float2bfloat16(sum > 0 ? acc / sum : 0.0f);
    } else {
      const int64_t row = (int64_t{seq} * args.n_heads + head) * n_splits + split;
      partial[row * (kD + 2) + d] = acc;
      if (d == 0) {
        partial[row * (kD + 2) + kD] = max_all;
        partial[row * (kD + 2) + kD + 1] = sum;
      }
    }
  }
}

// Merges the splits of one (seq, head): one thread per output element.
template <int kD>
__global__ void __launch_bounds__(kD)
    combine_splits_kernel(AttentionArgs args, const float* partial, int n_splits) {
  const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  const float* rows = partial + (int64_t{seq} * args.n_heads + head) * n_splits * (kD + 2);
  const int kv_len = args.seq_lens_kv[seq];
  const int keys = args.sliding_window > 0 ? min(kv_len, args.sliding_window) : kv_len;
  const int n_active = active_splits(keys, split_chunk(keys, n_splits));
  const float sink = sink_log2(args, head);
  float max_all = fmaxf(-FLT_MAX, sink);
  for (int sp = 0; sp < n_active; ++sp) max_all = fmaxf(max_all, rows[sp * (kD + 2) + kD]);
  float sum = exp2f(sink - max_all), acc = 0;
  for (int sp = 0; sp < n_active; ++sp) {
    const float* row = rows + sp * (kD + 2);
    const float w = exp2f(row[kD] - max_all);
    sum += row[kD + 1] * w;
    acc += row[d] * w;
  }
  const int token = args.cu_seqlens_q[seq];
  static_cast<bf16*>(args.out)[(int64_t{token} * args.n_heads + head) * kD + d] =
      __float2bfloat16(sum > 0 ? acc / sum : 0.0f);
}

template <int kD, int kG>
void launch_with(const AttentionArgs& args, float* workspace, int n_sms, cudaStream_t stream) {
  const int n_splits = plan_n_splits(args, n_sms);
  const dim3 grid(n_splits, args.n_kv_heads, args.n_seqs);
  const float scale_log2 = args.scale * kLog2e;
  attention_decode_kernel<kD, kG><<<grid, kThreads, 0, stream>>>(args, scale_log2, workspace);
  CUDA_CHECK_LAUNCH();
  if (n_splits > 1) {
    combine_splits_kernel<kD><<<dim3(args.n_heads, args.n_seqs), kD, 0, stream>>>(
        args, workspace, n_splits);
    CUDA_CHECK_LAUNCH();
  }
}

template <int kD>
void launch_head_dim(const AttentionArgs& args, float* workspace, int n_sms,
                     cudaStream_t stream) {
  const int group = args.n_heads / args.n_kv_heads;
  if (group <= 1) return launch_with<kD, 1>(args, workspace, n_sms, stream);
  if (group <= 2) return launch_with<kD, 2>(args, workspace, n_sms, stream);
  if (group <= 4) return launch_with<kD, 4>(args, workspace, n_sms, stream);
  if (group <= 8) return launch_with<kD, 8>(args, workspace, n_sms, stream);
  fail_dispatch("decode attention GQA group (heads per KV head), at most", group, {1, 2, 4, 8});
}

}  // namespace

size_t decode_workspace_floats(const AttentionArgs& args, int n_sms) {
  const int n_splits = plan_n_splits(args, n_sms);
  if (n_splits == 1) return 0;
  return size_t(args.n_seqs) * args.n_heads * n_splits * (args.head_dim + 2);
}

// Splits happen only when n_seqs * n_kv_heads < 2 n_sms, and then n_seqs * n_splits <
// 2 n_sms / n_kv_heads + n_seqs < 4 n_sms / n_kv_heads; times n_heads * (head_dim + 2).
size_t decode_workspace_max_floats(int n_sms) { return size_t{4} * n_sms * 8 * (256 + 2); }

void launch_attention_decode(const AttentionArgs& args, float* workspace, int n_sms,
                             cudaStream_t stream) {
  if (args.n_seqs == 0) return;
  switch (args.head_dim) {
    case 64: return launch_head_dim<64>(args, workspace, n_sms, stream);
    case 128: return launch_head_dim<128>(args, workspace, n_sms, stream);
    case 256: return launch_head_dim<256>(args, workspace, n_sms, stream);
    default: fail_dispatch("attention head_dim", args.head_dim, {64, 128, 256});
  }
}

}  // namespace hadron::cuda
