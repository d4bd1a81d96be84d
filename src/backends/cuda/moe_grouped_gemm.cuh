// Tensor-core grouped GEMMs over the expert-sorted pairs of moe_experts' large-batch path
// (moe_grouped_gemm.cu), and the experts' activation shared with the CUDA-core kernels.
// Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/moe_kernels.h"

namespace hadron::cuda {

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
