// Token sampling on the GPU (semantics in ops/sampling.h): one 1024-thread block per row (the
// argmax of a few rows split over a cluster of blocks). Greedy is one argmax pass. Otherwise the
// top-k and top-p thresholds are found without a sort by radix selection over the order-preserving
// uint32 keys of the logits (8 passes of 4 bits, histograms of counts or of probability mass),
// min-p is a comparison, and the draw scans the kept mass in vocabulary order (per-warp segment
// sums, then one warp scans its segment).
#include <cooperative_groups.h>

#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"
#include "ops/sampling.h"

namespace hadron::cuda {
namespace {

constexpr int kThreads = 1024, kWarps = kThreads / 32;

struct Shared {
  float hist[16];
  float warp_hist[kWarps][16];
  float warp_values[kWarps];
  int warp_indices[kWarps];
  float broadcast_f;
  int broadcast_i;
};

__device__ uint32_t key_of(float value) { return ordered_key(__float_as_uint(value)); }

// Block-wide (max value, first index) over row[begin, end).
__device__ int block_argmax(const float* row, int64_t begin, int64_t end, Shared& sh,
                            float* max_out) {
  float best = -INFINITY;
  int best_idx = INT32_MAX;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads)
    if (row[i] > best) {
      best = row[i];
      best_idx = static_cast<int>(i);
    }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, best, offset);
    const int other_idx = __shfl_xor_sync(0xffffffffu, best_idx, offset);
    if (other > best || (other == best && other_idx < best_idx)) {
      best = other;
      best_idx = other_idx;
    }
  }
  if (threadIdx.x % 32 == 0) {
    sh.warp_values[threadIdx.x / 32] = best;
    sh.warp_indices[threadIdx.x / 32] = best_idx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w)
      if (sh.warp_values[w] > best ||
          (sh.warp_values[w] == best && sh.warp_indices[w] < best_idx)) {
        best = sh.warp_values[w];
        best_idx = sh.warp_indices[w];
      }
    sh.broadcast_f = best;
    sh.broadcast_i = best_idx == INT32_MAX ? 0 : best_idx;
  }
  __syncthreads();
  *max_out = sh.broadcast_f;
  const int result = sh.broadcast_i;
  __syncthreads();
  return result;
}

__device__ float block_sum(float value, Shared& sh) {
  value = warp_sum(value);
  if (threadIdx.x % 32 == 0) sh.warp_values[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x < 32) {
    float total = sh.warp_values[threadIdx.x];
    total = warp_sum(total);
    if (threadIdx.x == 0) sh.broadcast_f = total;
  }
  __syncthreads();
  const float total = sh.broadcast_f;
  __syncthreads();
  return total;
}

// The largest key t such that the weight of {key >= t} among keys >= floor reaches target;
// weight is 1 (kMass false: counting, for top-k) or the probability (top-p). Radix selection
// with 4-bit digits, most significant first: each thread keeps a 16-bin histogram in
// registers (no atomics: the top digits of float keys cluster in a few bins, which would
// serialise shared-memory atomics), then the block sums the bins. Deterministic.
template <bool kMass>
__device__ uint32_t radix_select(const float* row, int64_t vocab, float max_logit,
                                 float inv_temperature, uint32_t floor, float target, Shared& sh) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint32_t prefix = 0;
  float above = 0;  // weight of the candidates above the current prefix
  for (int shift = 28; shift >= 0; shift -= 4) {
    const uint32_t mask = shift == 28 ? 0u : ~0u << (shift + 4);
    float hist[16] = {};
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
      const uint32_t key = key_of(row[i]);
      if (key < floor || (key & mask) != prefix) continue;
      const float weight = kMass ? expf((row[i] - max_logit) * inv_temperature) : 1.0f;
      const uint32_t digit = (key >> shift) & 15;
#pragma unroll
      for (int b = 0; b < 16; ++b) hist[b] += digit == b ? weight : 0.0f;
    }
#pragma unroll
    for (int b = 0; b < 16; ++b) hist[b] = warp_sum(hist[b]);
    if (lane == 0)
#pragma unroll
      for (int b = 0; b < 16; ++b) sh.warp_hist[warp][b] = hist[b];
    __syncthreads();
    if (threadIdx.x < 16) {
      float total = 0;
      for (int w = 0; w < kWarps; ++w) total += sh.warp_hist[w][threadIdx.x];
      sh.hist[threadIdx.x] = total;
    }
    __syncthreads();
    // Every thread walks the same 16 sums from the top digit down.
    float acc = above;
    int chosen = -1, lowest_nonempty = 0;
    for (int d = 15; d >= 0; --d) {
      const float h = sh.hist[d];
      if (h == 0) continue;
      lowest_nonempty = d;
      if (acc + h >= target) {
        chosen = d;
        break;
      }
      acc += h;
    }
    if (chosen < 0) chosen = lowest_nonempty;  // rounding left the target unreached
    prefix |= uint32_t(chosen) << shift;
    above = acc;
    __syncthreads();  // sh.hist and sh.warp_hist are rewritten by the next pass
  }
  return prefix;
}

// Few rows leave most SMs idle while one block a row reads its whole row (151,936 logits of
// Qwen3, 201,088 of gpt-oss): up to kSplitRows rows, each row's argmax is split over a
// cluster of kArgmaxSplit blocks (grid.x; kClustered) and merged in block 0, which alone goes on
// for non-greedy rows (docs/performance-notes.md, "Sampling").
constexpr int kArgmaxSplit = 8, kSplitRows = 16;
struct Partial {
  float value[kArgmaxSplit];
  int index[kArgmaxSplit];
};

template <bool kClustered>
__global__ void __launch_bounds__(kThreads) sample_kernel(SampleArgs args) {
  __shared__ Shared sh;
  pdl_wait();
  pdl_launch_dependents();
  const int64_t r = kClustered ? blockIdx.y : blockIdx.x, vocab = args.vocab;
  const float* row = args.logits + r * vocab;
  const float temperature = args.temperature[r];
  const int top_k = args.top_k[r];
  float max_logit;
  int argmax;
  if constexpr (!kClustered) {
    argmax = block_argmax(row, 0, vocab, sh, &max_logit);
  } else {
    __shared__ Partial partial;
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = static_cast<int>(blockIdx.x);
    const int64_t segment = (vocab + kArgmaxSplit - 1) / kArgmaxSplit;
    const int64_t begin = rank * segment, end = min(vocab, begin + segment);
    const int local = block_argmax(row, begin, end, sh, &max_logit);
    if (threadIdx.x == 0) {
      Partial* target = cluster.map_shared_rank(&partial, 0);
      target->value[rank] = max_logit;
      target->index[rank] = local;  // (an empty segment's maximum is -inf: never taken)
    }
    cluster.sync();
    if (rank != 0) return;
    // Segments in vocabulary order (the first is never empty): a later one wins only when
    // strictly greater, so the first index of the largest logit is kept.
    max_logit = partial.value[0];
    argmax = partial.index[0];
    for (int p = 1; p < kArgmaxSplit; ++p)
      if (partial.value[p] > max_logit) {
        max_logit = partial.value[p];
        argmax = partial.index[p];
      }
  }
  if (temperature <= 0 || top_k == 1) {
    if (threadIdx.x == 0) args.tokens[r] = argmax;
    return;
  }
  const float inv_temperature = 1.0f / temperature;
  auto prob = [&](int64_t i) { return expf((row[i] - max_logit) * inv_temperature); };
  uint32_t threshold = 0;
  if (top_k > 0 && top_k < vocab)
    threshold = radix_select<false>(row, vocab, max_logit, inv_temperature, 0,
                                    static_cast<float>(top_k), sh);
  const float top_p = args.top_p[r];
  if (top_p < 1) {
    float kept_mass = 0;
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads)
      if (key_of(row[i]) >= threshold) kept_mass += prob(i);
    kept_mass = block_sum(kept_mass, sh);
    threshold = max(threshold, radix_select<true>(row, vocab, max_logit, inv_temperature, threshold,
                                                  top_p * kept_mass, sh));
  }
  const float min_p = args.min_p[r];
  auto kept_prob = [&](int64_t i) {
    const float p = prob(i);
    return key_of(row[i]) >= threshold && p >= min_p ? p : 0.0f;
  };
  // The draw: each warp owns a contiguous segment of the vocabulary (read coalesced, 32
  // consecutive tokens per step); the warp whose share of the kept mass holds the target
  // walks its segment with warp-wide scans to the first token past it.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t segment = (vocab + kWarps * 32 - 1) / (kWarps * 32) * 32;
  const int64_t seg_begin = warp * segment, seg_end = min(vocab, seg_begin + segment);
  float local = 0;
  int last_kept = -1;
  for (int64_t i = seg_begin + lane; i < seg_end; i += 32) {
    const float p = kept_prob(i);
    local += p;
    if (p > 0) last_kept = static_cast<int>(i);
  }
  local = warp_sum(local);
  for (int offset = 16; offset > 0; offset >>= 1)
    last_kept = max(last_kept, __shfl_xor_sync(0xffffffffu, last_kept, offset));
  if (lane == 0) {
    sh.warp_values[warp] = local;
    sh.warp_indices[warp] = last_kept;
  }
  if (threadIdx.x == 0) sh.broadcast_i = -1;
  __syncthreads();
  float warp_offset = 0, total = 0;
  int overall_last = -1;
  for (int w = 0; w < kWarps; ++w) {
    if (w < warp) warp_offset += sh.warp_values[w];
    total += sh.warp_values[w];
    overall_last = max(overall_last, sh.warp_indices[w]);
  }
  const float target = sample_uniform(args.seeds[r], args.offsets[r]) * total;
  if (local > 0 && warp_offset <= target && target < warp_offset + local) {
    float acc = warp_offset;
    int pick = last_kept;
    for (int64_t base = seg_begin; base < seg_end; base += 32) {
      const int64_t i = base + lane;
      const float p = i < seg_end ? kept_prob(i) : 0.0f;
      float inclusive = p;
      for (int offset = 1; offset < 32; offset <<= 1) {
        const float other = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += other;
      }
      const unsigned past = __ballot_sync(0xffffffffu, p > 0 && acc + inclusive > target);
      if (past != 0) {
        pick = static_cast<int>(base) + __ffs(past) - 1;
        break;
      }
      acc += __shfl_sync(0xffffffffu, inclusive, 31);
    }
    if (lane == 0) sh.broadcast_i = pick;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int pick = sh.broadcast_i;
    args.tokens[r] = pick >= 0 ? pick : (overall_last >= 0 ? overall_last : argmax);
  }
}

}  // namespace

void launch_sample(const SampleArgs& args, cudaStream_t stream) {
  if (args.n_rows == 0) return;
  if (args.n_rows <= kSplitRows)
    return launch_pdl_clustered(sample_kernel<true>, dim3(kArgmaxSplit, args.n_rows),
                                dim3(kThreads), 0, stream, kArgmaxSplit, args);
  launch_pdl(sample_kernel<false>, dim3(args.n_rows), dim3(kThreads), 0, stream, args);
}

}  // namespace hadron::cuda
