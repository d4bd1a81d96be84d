// MoE routing: one warp per token. Scores and selection scores live in registers (routers
// without groups, up to 256 experts) or in shared memory (group masking); the top-k is warp
// arg-max rounds (ties go to the lower expert index, as the CPU reference's stable sort).
// Launched as launch.cuh says (pdl_wait() first: the logits are activations). For
// decode-sized batches the router's product runs in the same kernel:
//  - routers up to 1 MB: one cluster of 16 blocks (8 where 16 cannot be resident), whose
//    warps leave partial logits in block 0's shared memory; block 0 routes every token after
//    one cluster barrier;
//  - larger ones (GLM-4.5, DeepSeek-V3): a warp per expert writes that expert's logits, and
//    the last block to finish routes every token.
// What each choice measured: docs/performance-notes.md, "MoE router".
#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4;        // routing: one token per warp
constexpr int kRouterAhead = 8;  // 16-byte router loads a lane issues before pdl_wait()
// Static and dynamic shared memory share the 48 KB a block gets without opting in; the routing
// kernels' static part is at most a flag, so 1 KB of headroom covers it.
constexpr size_t kSharedWithoutOptIn = 47 * 1024;

// Warp arg-max of (value, index): larger value, then smaller index.
__device__ __forceinline__ void warp_argmax(float& value, int& index) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    const int other_index = __shfl_xor_sync(0xffffffffu, index, offset);
    if (other > value || (other == value && other_index < index))
      value = other, index = other_index;
  }
}

// kFromL2: the logits were written by other blocks of this kernel (read past L1).
template <bool kFromL2>
__device__ __forceinline__ float load_logit(const float* p) {
  if constexpr (kFromL2) return __ldcg(p);
  return *p;
}

// The scoring both routings share: a sigmoid score, and expert e's score correction (added to
// its score for the selection only; 0 without one).
__device__ __forceinline__ float sigmoid_score(float logit) { return 1.0f / (1.0f + expf(-logit)); }
__device__ __forceinline__ float correction(const MoeRouteArgs& a, int e) {
  if (a.correction_bias == nullptr) return 0.0f;
  return a.correction_bias_f32 ? static_cast<const float*>(a.correction_bias)[e]
                               : __bfloat162float(static_cast<const bf16*>(a.correction_bias)[e]);
}

template <bool kFromL2>
__device__ void compute_scores(const MoeRouteArgs& a, const float* logits, float* scores,
                               float* choice, int lane) {
  const int n = a.n_experts;
  if (a.sigmoid) {
    for (int e = lane; e < n; e += 32) scores[e] = sigmoid_score(load_logit<kFromL2>(logits + e));
  } else {
    float max_logit = -FLT_MAX;
    for (int e = lane; e < n; e += 32)
      max_logit = fmaxf(max_logit, load_logit<kFromL2>(logits + e));
    max_logit = warp_max(max_logit);
    float sum = 0;
    for (int e = lane; e < n; e += 32)
      sum += (scores[e] = expf(load_logit<kFromL2>(logits + e) - max_logit));
    sum = warp_sum(sum);
    for (int e = lane; e < n; e += 32) scores[e] /= sum;
  }
  for (int e = lane; e < n; e += 32) choice[e] = scores[e] + correction(a, e);
  __syncwarp();
}

// Token t's picks, lane j < top_k holding the j-th (my_id, its score; 0 on other lanes): the
// ids and the weights (renormalised over the picks if asked, then scaled).
__device__ __forceinline__ void write_picks(const MoeRouteArgs& a, int64_t t, int lane, int my_id,
                                            float my_score) {
  float sum = warp_sum(my_score);
  if (a.sigmoid) sum += 1e-20f;
  if (lane < a.top_k) {
    a.topk_ids[t * a.top_k + lane] = my_id;
    const float weight = a.normalize ? my_score / sum : my_score;
    a.topk_weights[t * a.top_k + lane] = weight * a.scaling;
  }
}

// Keeps the topk_group groups with the best sum of their two best choices; -inf elsewhere.
__device__ void mask_groups(const MoeRouteArgs& a, float* choice, int lane) {
  const int group_size = a.n_experts / a.n_group;
  float group_score = -FLT_MAX;
  if (lane < a.n_group) {
    float best = -FLT_MAX, second = -FLT_MAX;
    for (int e = lane * group_size; e < (lane + 1) * group_size; ++e) {
      const float c = choice[e];
      if (c > best)
        second = best, best = c;
      else if (c > second)
        second = c;
    }
    group_score = best + (group_size > 1 ? second : 0.0f);
  }
  bool kept = false;
  for (int round = 0; round < a.topk_group; ++round) {
    float value = kept ? -FLT_MAX : group_score;
    int index = lane < a.n_group && !kept ? lane : 1 << 30;
    warp_argmax(value, index);
    if (lane == index) kept = true;
  }
  if (lane < a.n_group && !kept)
    for (int e = lane * group_size; e < (lane + 1) * group_size; ++e) choice[e] = -INFINITY;
  __syncwarp();
}

// A float's bits as an unsigned key in the float order (-0 as +0; NaN below -inf, as a NaN
// choice never wins a comparison).
__device__ __forceinline__ unsigned order_key(float value) {
  if (!(value == value)) return 0;
  const unsigned bits = __float_as_uint(value + 0.0f);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

// Routes token t, whose logits row is `logits`, with one warp; scores: 2 * n_experts floats of
// shared memory. The top-k picks the largest choice, ties to the lower expert index (the CPU
// reference's stable sort): each lane keeps the best of its experts (e = lane mod 32), a
// round takes the warp's largest key and then its smallest expert among that key's holders
// (two warp reductions), and only the winning lane rescans its experts. Used where groups are
// masked (route_token takes the others).
template <bool kFromL2>
__device__ __forceinline__ void route_token_in_shared(const MoeRouteArgs& a, int64_t t,
                                                      const float* logits, float* scores,
                                                      int lane) {
  float* choice = scores + a.n_experts;
  compute_scores<kFromL2>(a, logits, scores, choice, lane);
  if (a.n_group > 1) mask_groups(a, choice, lane);
  unsigned best_key = 0;
  int best = 1 << 30;
  const auto rescan = [&] {
    best_key = 0, best = 1 << 30;
    for (int e = lane; e < a.n_experts; e += 32) {
      const unsigned key = order_key(choice[e]);
      if (key > best_key || best == 1 << 30) best_key = key, best = e;
    }
  };
  rescan();
  int my_id = 0;  // lane j < top_k keeps the j-th pick
  for (int j = 0; j < a.top_k; ++j) {
    const unsigned top_key = __reduce_max_sync(0xffffffffu, best_key);
    const int index =
        static_cast<int>(__reduce_min_sync(0xffffffffu, best_key == top_key ? best : 1 << 30));
    if (lane == j) my_id = index;
    if (lane == index % 32) {
      choice[index] = -INFINITY;
      rescan();
    }
  }
  __syncwarp();
  write_picks(a, t, lane, my_id, lane < a.top_k ? scores[my_id] : 0.0f);
}

// route_token_in_shared's routing for routers without groups, the kPerLane experts of a lane
// (e = lane + 32 i) held in registers: the same scores and choices in the same arithmetic, the
// same rounds, but a round's winning lane rescans its registers instead of shared memory and
// the pick's score comes by shuffle (routing in shared memory took about half the router's
// time at batch 1).
template <int kPerLane, bool kFromL2>
__device__ __forceinline__ void route_token_in_registers(const MoeRouteArgs& a, int64_t t,
                                                         const float* logits, int lane) {
  constexpr int kNone = 1 << 30;
  const int n = a.n_experts;
  float score[kPerLane];
  if (a.sigmoid) {
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int e = lane + 32 * i;
      score[i] = e < n ? sigmoid_score(load_logit<kFromL2>(logits + e)) : 0.0f;
    }
  } else {
    float logit[kPerLane];
    float max_logit = -FLT_MAX;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int e = lane + 32 * i;
      logit[i] = e < n ? load_logit<kFromL2>(logits + e) : 0.0f;
      if (e < n) max_logit = fmaxf(max_logit, logit[i]);
    }
    max_logit = warp_max(max_logit);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      if (lane + 32 * i < n) sum += (score[i] = expf(logit[i] - max_logit));
    sum = warp_sum(sum);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) score[i] /= sum;
  }
  unsigned key[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int e = lane + 32 * i;
    float bias = 0;
    if (a.correction_bias != nullptr && e < n) bias = correction(a, e);
    key[i] = order_key(score[i] + bias);
  }
  unsigned taken = 0;  // bit i: expert lane + 32 i picked
  unsigned best_key = 0;
  int best = kNone;
  float best_score = 0;  // (no dynamically indexed register arrays: they go to local memory)
  const auto rescan = [&] {
    best_key = 0, best = kNone;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int e = lane + 32 * i;
      if (e >= n || (taken >> i & 1u)) continue;
      if (key[i] > best_key || best == kNone) best_key = key[i], best = e, best_score = score[i];
    }
  };
  rescan();
  int my_id = 0;  // lane j < top_k keeps the j-th pick and its score
  float my_score = 0;
  for (int j = 0; j < a.top_k; ++j) {
    const unsigned top_key = __reduce_max_sync(0xffffffffu, best_key);
    const int index =
        static_cast<int>(__reduce_min_sync(0xffffffffu, best_key == top_key ? best : kNone));
    // The pick is its owner lane's best.
    const float picked = __shfl_sync(0xffffffffu, best_score, index % 32);
    if (lane == j) my_id = index, my_score = picked;
    if (lane == index % 32) {
      taken |= 1u << (index / 32);
      rescan();
    }
  }
  write_picks(a, t, lane, my_id, lane < a.top_k ? my_score : 0.0f);
}

// Routes token t with one warp: in registers where there are no groups and at most 256
// experts, else in shared memory (scores: 2 * n_experts floats there).
template <bool kFromL2>
__device__ __forceinline__ void route_token(const MoeRouteArgs& a, int64_t t, const float* logits,
                                            float* scores, int lane) {
  if (a.n_group <= 1) {
    if (a.n_experts <= 32) return route_token_in_registers<1, kFromL2>(a, t, logits, lane);
    if (a.n_experts <= 64) return route_token_in_registers<2, kFromL2>(a, t, logits, lane);
    if (a.n_experts <= 128) return route_token_in_registers<4, kFromL2>(a, t, logits, lane);
    if (a.n_experts <= 256) return route_token_in_registers<8, kFromL2>(a, t, logits, lane);
  }
  route_token_in_shared<kFromL2>(a, t, logits, scores, lane);
}

__global__ void __launch_bounds__(kWarps * 32) moe_route_kernel(MoeRouteArgs a) {
  extern __shared__ float shared[];
  pdl_wait();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t t = blockIdx.x * int64_t{kWarps} + warp;
  if (t < a.n_tokens)
    route_token<false>(a, t, a.logits + t * a.n_experts, shared + warp * 2 * a.n_experts, lane);
}

// acc[m] += dot(w, x[m, c * 8 .. c * 8 + 7]) for the batch's tokens.
__device__ __forceinline__ void router_dot(const Bf16x8& w, const bf16* x, int64_t hidden,
                                           int64_t n_tokens, int c,
                                           float (&acc)[kMoeRouterMaxTokens]) {
  float wf[8];
  to_f32(w, wf);
#pragma unroll
  for (int m = 0; m < kMoeRouterMaxTokens; ++m) {
    if (m >= n_tokens) break;
    float xf[8];
    to_f32(load8(x + m * hidden + int64_t{c} * 8), xf);
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[m] += wf[i] * xf[i];
  }
}

// A warp's share of one router row: vectors [begin, end) of w. The router is a weight, so
// each lane's first kRouterAhead loads may be issued before pdl_wait() (load_router_ahead);
// router_slice_dot then uses them (with_ahead) and streams the rest, adding the products with
// every token's x into acc.
__device__ __forceinline__ void load_router_ahead(const bf16* w, int begin, int end, int lane,
                                                  Bf16x8 (&ahead)[kRouterAhead]) {
#pragma unroll
  for (int u = 0; u < kRouterAhead; ++u)
    if (begin + lane + 32 * u < end) ahead[u] = load8_streaming(w + (begin + lane + 32 * u) * 8);
}
__device__ __forceinline__ void router_slice_dot(const bf16* w, const bf16* x, int64_t hidden,
                                                 int64_t n_tokens, int begin, int end, int lane,
                                                 const Bf16x8 (&ahead)[kRouterAhead],
                                                 bool with_ahead,
                                                 float (&acc)[kMoeRouterMaxTokens]) {
  int c = begin + lane;
  if (with_ahead) {
#pragma unroll
    for (int u = 0; u < kRouterAhead; ++u)
      if (c + 32 * u < end) router_dot(ahead[u], x, hidden, n_tokens, c + 32 * u, acc);
    c += 32 * kRouterAhead;
  }
  for (; c < end; c += 32) router_dot(load8_streaming(w + c * 8), x, hidden, n_tokens, c, acc);
}

// Warp w of block b: expert e = b * kWarps + w's logit for every token. Then the last block
// to finish (a counter in r.done, reset by that block) routes the tokens, a warp each.
__global__ void __launch_bounds__(kWarps * 32) moe_router_kernel(MoeRouterArgs r) {
  extern __shared__ float shared[];
  __shared__ bool is_last;
  const MoeRouteArgs& a = r.route;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int e = blockIdx.x * kWarps + warp;
  const int n_vec = static_cast<int>(r.hidden / 8);
  const auto* x = static_cast<const bf16*>(r.x);
  const bf16* w = static_cast<const bf16*>(r.router) + int64_t{min(e, a.n_experts - 1)} * r.hidden;
  Bf16x8 ahead[kRouterAhead];
  load_router_ahead(w, 0, n_vec, lane, ahead);
  pdl_wait();
  pdl_launch_dependents();
  float acc[kMoeRouterMaxTokens] = {};
  router_slice_dot(w, x, r.hidden, a.n_tokens, 0, n_vec, lane, ahead, true, acc);
#pragma unroll
  for (int m = 0; m < kMoeRouterMaxTokens; ++m) {
    if (m >= a.n_tokens) break;
    const float logit = warp_sum(acc[m]);
    if (lane == 0 && e < a.n_experts)
      r.logits[m * a.n_experts + e] = logit + (r.bias != nullptr ? r.bias[e] : 0.0f);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // this block's logits before its count
    is_last = atomicAdd(r.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // every block's logits (read through L2 by route_token)
  for (int64_t t = warp; t < a.n_tokens; t += kWarps)
    route_token<true>(a, t, a.logits + t * a.n_experts, shared + warp * 2 * a.n_experts, lane);
  if (threadIdx.x == 0) *r.done = 0;
}

// The router for small routers (kClusterRouterMaxBytes): one cluster of kBlocks blocks,
// whose kClusterWarps warps split the router's rows (a row over several warps when there are
// fewer experts than warps). Each warp leaves its partial logits in block 0's shared memory;
// one cluster barrier later block 0 sums them in a fixed order and routes every token, a warp
// each. Against moe_router_kernel this takes the counter's atomic and two memory fences, and
// the logits' round trip through L2, off the path between the product and the experts.
// kBlocks is 16 (a non-portable cluster size) where such a cluster can be resident, so each SM
// streams half the router bytes it would in 8 blocks.
constexpr int kClusterBlockWarps = 16;
constexpr int64_t kClusterRouterMaxBytes = 1 << 20;

// Warps per expert row, and block 0's shared floats: partials [tokens][experts][splits],
// logits [tokens][experts], then 2 * n_experts per routing warp.
template <int kBlocks>
__host__ __device__ int cluster_splits(int n_experts) {
  return max(1, kBlocks * kClusterBlockWarps / n_experts);
}
template <int kBlocks>
size_t cluster_shared_bytes(int n_tokens, int n_experts) {
  const int routing_warps = std::min(n_tokens, kClusterBlockWarps);
  return sizeof(float) * n_experts *
         (size_t{1} * n_tokens * (cluster_splits<kBlocks>(n_experts) + 1) + 2 * routing_warps);
}

template <int kBlocks>
__global__ void __launch_bounds__(kClusterBlockWarps * 32)
    moe_router_cluster_kernel(MoeRouterArgs r) {
  constexpr int kClusterWarps = kBlocks * kClusterBlockWarps;
  extern __shared__ float shared[];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const MoeRouteArgs& a = r.route;
  const int n_experts = a.n_experts, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int n_tokens = static_cast<int>(a.n_tokens);
  const int splits = cluster_splits<kBlocks>(n_experts), per_pass = kClusterWarps / splits;
  const int global_warp = static_cast<int>(blockIdx.x) * kClusterBlockWarps + warp;
  const int slice = global_warp % splits, first_expert = global_warp / splits;
  const int n_vec = static_cast<int>(r.hidden / 8);
  const int begin = slice * n_vec / splits, end = (slice + 1) * n_vec / splits;
  const auto* x = static_cast<const bf16*>(r.x);
  const auto* router = static_cast<const bf16*>(r.router);
  float* partials = cluster.map_shared_rank(shared, 0);  // block 0's
  Bf16x8 ahead[kRouterAhead];
  load_router_ahead(router + int64_t{min(first_expert, n_experts - 1)} * r.hidden, begin, end, lane,
                    ahead);
  pdl_wait();
  pdl_launch_dependents();
  for (int e = first_expert; e < n_experts; e += per_pass) {
    float acc[kMoeRouterMaxTokens] = {};
    router_slice_dot(router + int64_t{e} * r.hidden, x, r.hidden, n_tokens, begin, end, lane, ahead,
                     e == first_expert, acc);
#pragma unroll
    for (int m = 0; m < kMoeRouterMaxTokens; ++m) {
      if (m >= n_tokens) break;
      const float sum = warp_sum(acc[m]);
      if (lane == 0) partials[(m * n_experts + e) * splits + slice] = sum;
    }
  }
  cluster.sync();  // every warp's partials are in block 0's shared memory
  if (blockIdx.x != 0) return;
  float* logits = shared + n_tokens * n_experts * splits;
  for (int i = threadIdx.x; i < n_tokens * n_experts; i += blockDim.x) {
    const float bias = r.bias != nullptr ? r.bias[i % n_experts] : 0.0f;
    float sum = 0;
    for (int j = 0; j < splits; ++j) sum += shared[i * splits + j];
    logits[i] = r.logits[i] = sum + bias;
  }
  __syncthreads();
  float* scratch = logits + n_tokens * n_experts;
  for (int t = warp; t < n_tokens; t += kClusterBlockWarps)
    route_token<false>(a, t, logits + t * n_experts, scratch + warp * 2 * n_experts, lane);
}

size_t route_shared_bytes(int n_experts) { return size_t{kWarps} * 2 * n_experts * sizeof(float); }

template <typename Args>
void launch_routing(void (*kernel)(Args), unsigned blocks, int n_experts, const Args& args,
                    cudaStream_t stream) {
  const size_t shared_bytes = route_shared_bytes(n_experts);
  if (shared_bytes > kSharedWithoutOptIn)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared_bytes)));
  launch_pdl(kernel, blocks, kWarps * 32, shared_bytes, stream, args);
}

}  // namespace

void launch_moe_route(const MoeRouteArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  launch_routing(moe_route_kernel, static_cast<unsigned>(ceil_div(args.n_tokens, kWarps)),
                 args.n_experts, args, stream);
}

void launch_moe_router(const MoeRouterArgs& args, cudaStream_t stream) {
  if (args.route.n_tokens == 0) return;
  const int n_experts = args.route.n_experts, n_tokens = static_cast<int>(args.route.n_tokens);
  if (n_experts * args.hidden * int64_t{sizeof(bf16)} <= kClusterRouterMaxBytes) {
    constexpr int kThreads = kClusterBlockWarps * 32;
    // One cluster of kBlocks blocks, where its shared memory needs no opt-in.
    const auto launched = [&]<int kBlocks>() {
      const size_t bytes = cluster_shared_bytes<kBlocks>(n_tokens, n_experts);
      if (bytes > kSharedWithoutOptIn) return false;
      launch_pdl_clustered(moe_router_cluster_kernel<kBlocks>, dim3(kBlocks), dim3(kThreads), bytes,
                           stream, kBlocks, args);
      return true;
    };
    static const bool sixteen =
        cluster_fits(moe_router_cluster_kernel<16>, 16, kThreads, kSharedWithoutOptIn);
    if ((sixteen && launched.template operator()<16>()) || launched.template operator()<8>())
      return;
  }
  launch_routing(moe_router_kernel, static_cast<unsigned>(ceil_div(args.route.n_experts, kWarps)),
                 args.route.n_experts, args, stream);
}

}  // namespace hadron::cuda
