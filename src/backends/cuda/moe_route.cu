// MoE routing: one warp per token. Scores and selection scores live in shared memory; group
// masking and the top-k are warp arg-max rounds (ties go to the lower expert index, as the
// CPU reference's stable sort). Launched as launch.cuh says (pdl_wait() first: the logits are
// activations).
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4;

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
    for (int e = lane; e < n; e += 32) scores[e] = 1.0f / (1.0f + expf(-logits[e]));
  } else {
    float max_logit = -FLT_MAX;
    for (int e = lane; e < n; e += 32) max_logit = fmaxf(max_logit, logits[e]);
    max_logit = warp_max(max_logit);
    float sum = 0;
    for (int e = lane; e < n; e += 32) sum += (scores[e] = expf(logits[e] - max_logit));
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

__global__ void __launch_bounds__(kWarps * 32) moe_route_kernel(MoeRouteArgs a) {
  extern __shared__ float shared[];
  pdl_wait();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t t = blockIdx.x * int64_t{kWarps} + warp;
  if (t >= a.n_tokens) return;
  float* scores = shared + warp * 2 * a.n_experts;
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

}  // namespace

void launch_moe_route(const MoeRouteArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  const size_t shared_bytes = size_t{kWarps} * 2 * args.n_experts * sizeof(float);
  if (shared_bytes > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(moe_route_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared_bytes)));
  launch_pdl(moe_route_kernel, static_cast<unsigned>(ceil_div(args.n_tokens, kWarps)), kWarps * 32,
             shared_bytes, stream, args);
}

}  // namespace hadron::cuda
