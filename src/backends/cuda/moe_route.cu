// MoE routing: one warp per token. Scores and selection scores live in shared memory; group
// masking and the top-k are warp arg-max rounds (ties go to the lower expert index, as the
// CPU reference's stable sort). Launched as launch.cuh says (pdl_wait() first: the logits are
// activations). For decode-sized batches the router's product runs in the same kernel: a warp
// per expert writes that expert's logits, and the last block to finish routes every token.
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4;         // routing: one token per warp
constexpr int kRouterAhead = 8;  // 16-byte router loads a lane issues before pdl_wait()

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

__device__ void compute_scores(const MoeRouteArgs& a, const float* logits, float* scores,
                               float* choice, int lane) {
  const int n = a.n_experts;
  if (a.sigmoid) {
    for (int e = lane; e < n; e += 32) scores[e] = 1.0f / (1.0f + expf(-__ldcg(logits + e)));
  } else {
    float max_logit = -FLT_MAX;
    for (int e = lane; e < n; e += 32) max_logit = fmaxf(max_logit, __ldcg(logits + e));
    max_logit = warp_max(max_logit);
    float sum = 0;
    for (int e = lane; e < n; e += 32) sum += (scores[e] = expf(__ldcg(logits + e) - max_logit));
    sum = warp_sum(sum);
    for (int e = lane; e < n; e += 32) scores[e] /= sum;
  }
  for (int e = lane; e < n; e += 32) {
    float bias = 0;
    if (a.correction_bias != nullptr)
      bias = a.correction_bias_f32
                 ? static_cast<const float*>(a.correction_bias)[e]
                 : __bfloat162float(static_cast<const bf16*>(a.correction_bias)[e]);
    choice[e] = scores[e] + bias;
  }
  __syncwarp();
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

// Routes token t with one warp; scores: 2 * n_experts floats of shared memory. The logits are
// read through L2 (another block of the fused router kernel may have written them).
__device__ void route_token(const MoeRouteArgs& a, int64_t t, float* scores, int lane) {
  float* choice = scores + a.n_experts;
  compute_scores(a, a.logits + t * a.n_experts, scores, choice, lane);
  if (a.n_group > 1) mask_groups(a, choice, lane);
  int my_id = 0;  // lane j < top_k keeps the j-th pick
  float my_score = 0;
  for (int j = 0; j < a.top_k; ++j) {
    float value = -INFINITY;
    int index = 1 << 30;
    for (int e = lane; e < a.n_experts; e += 32)
      if (choice[e] > value || (choice[e] == value && e < index)) value = choice[e], index = e;
    warp_argmax(value, index);
    if (lane == j) my_id = index, my_score = scores[index];
    __syncwarp();
    if (lane == 0) choice[index] = -INFINITY;
    __syncwarp();
  }
  float sum = warp_sum(lane < a.top_k ? my_score : 0.0f);
  if (a.sigmoid) sum += 1e-20f;
  if (lane < a.top_k) {
    a.topk_ids[t * a.top_k + lane] = my_id;
    const float weight = a.normalize ? my_score / sum : my_score;
    a.topk_weights[t * a.top_k + lane] = weight * a.scaling;
  }
}

__global__ void __launch_bounds__(kWarps * 32) moe_route_kernel(MoeRouteArgs a) {
  extern __shared__ float shared[];
  pdl_wait();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t t = blockIdx.x * int64_t{kWarps} + warp;
  if (t < a.n_tokens) route_token(a, t, shared + warp * 2 * a.n_experts, lane);
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
  Bf16x8 ahead[kRouterAhead];  // the router is a weight: its first loads precede the wait
#pragma unroll
  for (int u = 0; u < kRouterAhead; ++u)
    if (lane + 32 * u < n_vec) ahead[u] = load8_streaming(w + (lane + 32 * u) * 8);
  pdl_wait();
  pdl_launch_dependents();
  float acc[kMoeRouterMaxTokens] = {};
#pragma unroll
  for (int u = 0; u < kRouterAhead; ++u)
    if (lane + 32 * u < n_vec) router_dot(ahead[u], x, r.hidden, a.n_tokens, lane + 32 * u, acc);
  for (int c = lane + 32 * kRouterAhead; c < n_vec; c += 32)
    router_dot(load8_streaming(w + c * 8), x, r.hidden, a.n_tokens, c, acc);
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
    route_token(a, t, shared + warp * 2 * a.n_experts, lane);
  if (threadIdx.x == 0) *r.done = 0;
}

size_t route_shared_bytes(int n_experts) { return size_t{kWarps} * 2 * n_experts * sizeof(float); }

template <typename Args>
void launch_routing(void (*kernel)(Args), unsigned blocks, int n_experts, const Args& args,
                    cudaStream_t stream) {
  const size_t shared_bytes = route_shared_bytes(n_experts);
  // Static and dynamic shared memory share the 48 KB a block gets without opting in; the
  // router kernel's static part is a flag, so 1 KB of headroom covers it.
  if (shared_bytes > 47 * 1024)
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
  launch_routing(moe_router_kernel, static_cast<unsigned>(ceil_div(args.route.n_experts, kWarps)),
                 args.route.n_experts, args, stream);
}

}  // namespace hadron::cuda
