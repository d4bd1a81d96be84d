// Tensor-core grouped GEMMs over the expert-sorted pairs of moe_experts' large-batch path
// (moe_grouped_gemm.cu), and the device helpers both expert paths share (which rows of the
// stacked gate_up matrix an intermediate index uses, biases, the activation).
// Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "backends/cuda/moe_kernels.h"

namespace hadron::cuda {

// Row of expert e's gate (up = false) or up projection for intermediate index i in the stacked
// [n_experts, 2 inter, hidden] gate_up weights (and its [n_experts, 2 inter] bias):
// [gate | up] halves, or gpt-oss's interleaved gate, up pairs.
__device__ __forceinline__ int64_t moe_gate_up_row(const MoeExpertsArgs& a, int64_t e, int64_t i,
                                                   bool up) {
  return e * 2 * a.inter + (a.interleaved_clamped ? 2 * i + up : i + (up ? a.inter : 0));
}

// bias[i] as fp32, 0 without a bias (bf16).
__device__ __forceinline__ float moe_bias(const void* bias, int64_t i) {
  return bias == nullptr ? 0.0f : __bfloat162float(static_cast<const __nv_bfloat16*>(bias)[i]);
}

// SwiGLU on (gate, up), or gpt-oss's clamped variant: up and gate clamped to the limit,
// (up + 1) * gate * sigmoid(alpha * gate).
__device__ __forceinline__ float moe_activate(const MoeExpertsArgs& a, float gate, float up) {
  if (!a.interleaved_clamped) return gate / (1.0f + expf(-gate)) * up;
  gate = fminf(gate, a.swiglu_limit);
  up = fminf(fmaxf(up, -a.swiglu_limit), a.swiglu_limit);
  return (up + 1.0f) * gate / (1.0f + expf(-a.swiglu_alpha * gate));
}

// bf16 weights only. After moe_align_kernel has filled the workspace's offsets, active and
// sorted_pairs: activated[row] = act(x[token of row] W_gate_up[e]^T + b) for every sorted row.
void launch_moe_gate_up_mma(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                            cudaStream_t stream);
// expert_out[row] = activated[row] W_down[e]^T + b for every sorted row.
void launch_moe_down_mma(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                         cudaStream_t stream);

}  // namespace hadron::cuda
