// Multi-head latent attention: the latent-cache write (q rope, latent RMSNorm, key rope) and
// causal attention over the latent cache in the absorbed form, one block per (token, head)
// doing the whole of it: the query folded through the head's W_k, an online softmax over the
// context with the latent accumulated in registers, and the head's W_v applied to the result.
// A correct first form: every head re-reads the context (from L2 for the heads of one token);
// the tensor-core kernel that shares each latent row among heads is still to come.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Rotates the pairs of one rope_dim-wide vector in place (interleaved or NeoX halves).
__device__ void rope_in_place(bf16* x, const float* row, int rope_dim, bool neox, int tid,
                              int n_threads) {
  const int half = rope_dim / 2;
  for (int pair = tid; pair < half; pair += n_threads) {
    const int a = neox ? pair : 2 * pair, b = neox ? pair + half : 2 * pair + 1;
    const float x1 = __bfloat162float(x[a]), x2 = __bfloat162float(x[b]);
    const float cos = row[pair], sin = row[half + pair];
    x[a] = __float2bfloat16(x1 * cos - x2 * sin);
    x[b] = __float2bfloat16(x2 * cos + x1 * sin);
  }
}

__device__ float block_sum(float value, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  value = warp_sum(value);
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < kWarps; ++w) total += scratch[w];
  __syncthreads();
  return total;
}

__global__ void __launch_bounds__(kThreads) mla_rope_store_kernel(MlaArgs a) {
  const int t = blockIdx.x;
  __shared__ float scratch[kWarps];
  const int32_t pos = a.positions[t];
  const float* row = a.cos_sin + static_cast<int64_t>(pos) * a.rope_dim;
  const int qk = a.nope_dim + a.rope_dim, entry = a.latent_dim + a.rope_dim;
  bf16* q = static_cast<bf16*>(a.q) + static_cast<int64_t>(t) * a.n_heads * qk;
  const int half = a.rope_dim / 2;
  // q: every head's rope part, a pair per thread
  for (int i = threadIdx.x; i < a.n_heads * half; i += kThreads) {
    const int h = i / half, pair = i % half;
    bf16* x = q + h * qk + a.nope_dim;
    const int lo = a.neox ? pair : 2 * pair, hi = a.neox ? pair + half : 2 * pair + 1;
    const float x1 = __bfloat162float(x[lo]), x2 = __bfloat162float(x[hi]);
    const float cos = row[pair], sin = row[half + pair];
    x[lo] = __float2bfloat16(x1 * cos - x2 * sin);
    x[hi] = __float2bfloat16(x2 * cos + x1 * sin);
  }
  const int64_t slot = a.slot_mapping[t];
  if (slot < 0) return;  // a padding token (CUDA-graph batches): no cache write
  const bf16* kv = static_cast<const bf16*>(a.kv) + static_cast<int64_t>(t) * entry;
  bf16* out = static_cast<bf16*>(a.latent_cache) + slot * entry;
  float sum_sq = 0;
  for (int i = threadIdx.x; i < a.latent_dim; i += kThreads) {
    const float v = __bfloat162float(kv[i]);
    sum_sq += v * v;
  }
  const float inv = rsqrtf(block_sum(sum_sq, scratch) / a.latent_dim + a.norm_eps);
  const bf16* w = static_cast<const bf16*>(a.kv_norm);
  for (int i = threadIdx.x; i < a.latent_dim; i += kThreads)
    out[i] = __float2bfloat16(__bfloat162float(kv[i]) * inv * __bfloat162float(w[i]));
  for (int i = threadIdx.x; i < a.rope_dim; i += kThreads)
    out[a.latent_dim + i] = kv[a.latent_dim + i];
  __syncthreads();
  if (threadIdx.x < 32) rope_in_place(out + a.latent_dim, row, a.rope_dim, a.neox, threadIdx.x, 32);
}

// The latent dims one lane accumulates: latent_dim <= 32 * kMaxLatentPerLane.
constexpr int kMaxLatentPerLane = kMlaMaxLatent / 32;

__global__ void __launch_bounds__(kThreads) mla_attention_kernel(MlaArgs a) {
  const int t = blockIdx.x, h = blockIdx.y;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int qk = a.nope_dim + a.rope_dim, entry = a.latent_dim + a.rope_dim;
  const int head_rows = a.nope_dim + a.v_dim;
  extern __shared__ float smem[];
  float* q_nope = smem;                            // [nope]
  float* q_latent = q_nope + a.nope_dim;           // [latent]
  float* q_rope = q_latent + a.latent_dim;         // [rope]
  float* o_parts = q_rope + a.rope_dim;            // [warps, latent]
  float* stats = o_parts + kWarps * a.latent_dim;  // [warps] max, [warps] sum
  __shared__ int seq_shared;

  // The token's sequence and its position in it (as the CPU's row_places).
  if (threadIdx.x == 0) {
    int lo = 0, hi = a.n_seqs - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (a.cu_seqlens_q[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
    seq_shared = lo;
  }
  const bf16* q = static_cast<const bf16*>(a.q) + (static_cast<int64_t>(t) * a.n_heads + h) * qk;
  for (int i = threadIdx.x; i < a.nope_dim; i += kThreads) q_nope[i] = __bfloat162float(q[i]);
  for (int i = threadIdx.x; i < a.rope_dim; i += kThreads)
    q_rope[i] = __bfloat162float(q[a.nope_dim + i]);
  __syncthreads();
  const int s = seq_shared;
  const int q_len = a.cu_seqlens_q[s + 1] - a.cu_seqlens_q[s];
  const int position = a.seq_lens_kv[s] - q_len + (t - a.cu_seqlens_q[s]);

  // q_latent = W_k^T q_nope, W_k = kv_b rows [h * head_rows, h * head_rows + nope)
  const bf16* w_k =
      static_cast<const bf16*>(a.kv_b) + static_cast<int64_t>(h) * head_rows * a.latent_dim;
  for (int l = threadIdx.x; l < a.latent_dim; l += kThreads) {
    float sum = 0;
    for (int i = 0; i < a.nope_dim; ++i)
      sum += q_nope[i] * __bfloat162float(w_k[static_cast<int64_t>(i) * a.latent_dim + l]);
    q_latent[l] = sum;
  }
  __syncthreads();

  // Online softmax over keys 0..position, a key per warp at a time.
  const int32_t* table = a.block_tables + static_cast<int64_t>(s) * a.max_blocks_per_seq;
  const bf16* cache = static_cast<const bf16*>(a.latent_cache);
  float o[kMaxLatentPerLane];
#pragma unroll
  for (int i = 0; i < kMaxLatentPerLane; ++i) o[i] = 0;
  float running_max = -INFINITY, running_sum = 0;
  for (int j = warp; j <= position; j += kWarps) {
    const int64_t slot =
        static_cast<int64_t>(table[j / a.block_size]) * a.block_size + j % a.block_size;
    const bf16* e = cache + slot * entry;
    float partial = 0;
    for (int i = lane; i < a.latent_dim; i += 32) partial += q_latent[i] * __bfloat162float(e[i]);
    for (int i = lane; i < a.rope_dim; i += 32)
      partial += q_rope[i] * __bfloat162float(e[a.latent_dim + i]);
    const float score = warp_sum(partial) * a.scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = __expf(running_max - new_max), p = __expf(score - new_max);
    running_sum = running_sum * correction + p;
    running_max = new_max;
#pragma unroll
    for (int i = 0; i < kMaxLatentPerLane; ++i) {
      const int l = lane + 32 * i;
      o[i] = o[i] * correction + (l < a.latent_dim ? p * __bfloat162float(e[l]) : 0.0f);
    }
  }
  if (lane == 0) stats[warp] = running_max, stats[kWarps + warp] = running_sum;
  __syncthreads();
  float max_all = -INFINITY;
  for (int w = 0; w < kWarps; ++w) max_all = fmaxf(max_all, stats[w]);
  float sum_all = 0;
  for (int w = 0; w < kWarps; ++w)
    if (stats[w] > -INFINITY) sum_all += stats[kWarps + w] * __expf(stats[w] - max_all);
  const float weight = running_max > -INFINITY ? __expf(running_max - max_all) / sum_all : 0.0f;
#pragma unroll
  for (int i = 0; i < kMaxLatentPerLane; ++i) {
    const int l = lane + 32 * i;
    if (l < a.latent_dim) o_parts[warp * a.latent_dim + l] = o[i] * weight;
  }
  __syncthreads();
  for (int l = threadIdx.x; l < a.latent_dim; l += kThreads) {
    float sum = 0;
    for (int w = 0; w < kWarps; ++w) sum += o_parts[w * a.latent_dim + l];
    q_latent[l] = sum;  // reused: the attended latent
  }
  __syncthreads();

  // out = W_v o, W_v = kv_b rows [h * head_rows + nope, (h + 1) * head_rows)
  const bf16* w_v = w_k + static_cast<int64_t>(a.nope_dim) * a.latent_dim;
  bf16* out = static_cast<bf16*>(a.out) + (static_cast<int64_t>(t) * a.n_heads + h) * a.v_dim;
  for (int d = warp; d < a.v_dim; d += kWarps) {
    const bf16* w_row = w_v + static_cast<int64_t>(d) * a.latent_dim;
    float partial = 0;
    for (int l = lane; l < a.latent_dim; l += 32)
      partial += __bfloat162float(w_row[l]) * q_latent[l];
    const float value = warp_sum(partial);
    if (lane == 0) out[d] = __float2bfloat16(value);
  }
}

}  // namespace

void launch_mla_rope_store(const MlaArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  mla_rope_store_kernel<<<args.n_tokens, kThreads, 0, stream>>>(args);
  CUDA_CHECK_LAUNCH();
}

void launch_mla_attention(const MlaArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  const size_t smem =
      (args.nope_dim + args.latent_dim + args.rope_dim + kWarps * args.latent_dim + 2 * kWarps) *
      sizeof(float);
  mla_attention_kernel<<<dim3(args.n_tokens, args.n_heads), kThreads, smem, stream>>>(args);
  CUDA_CHECK_LAUNCH();
}

}  // namespace hadron::cuda
