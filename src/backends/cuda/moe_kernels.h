// Launchers of the mixture-of-experts kernels (moe_route.cu, moe_experts.cu). As kernels.h:
// raw device pointers and sizes that moe.cpp has validated; bf16 activations and weights.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace hadron::cuda {

struct MoeRouteArgs {
  const float* logits;          // [n_tokens, n_experts]
  const void* correction_bias;  // [n_experts] or null
  bool correction_bias_f32;     // else bf16
  int32_t* topk_ids;            // [n_tokens, top_k]
  float* topk_weights;          // [n_tokens, top_k]
  int64_t n_tokens;
  int n_experts;  // <= kMoeMaxExperts
  int top_k;      // <= 32
  bool sigmoid;   // else softmax
  bool normalize;
  int n_group, topk_group;  // n_group <= 32
  float scaling;
};
inline constexpr int kMoeMaxExperts = 1024;
void launch_moe_route(const MoeRouteArgs& args, cudaStream_t stream);

// The router's product and the routing in one kernel, for up to kMoeRouterMaxTokens tokens
// (moe_route.cu): the logits are also written to `logits`, which route.logits names too.
// `done` is a zeroed counter that the kernel for routers over 1 MB leaves zeroed (one per
// stream: kernels on it run one after another).
struct MoeRouterArgs {
  const void* x;       // bf16 [n_tokens, hidden]
  const void* router;  // bf16 [n_experts, hidden]
  const float* bias;   // [n_experts] or null
  float* logits;       // [n_tokens, n_experts]
  int64_t hidden;      // a multiple of 8
  unsigned* done;
  MoeRouteArgs route;
};
inline constexpr int kMoeRouterMaxTokens = 8;
void launch_moe_router(const MoeRouterArgs& args, cudaStream_t stream);

// Scratch of moe_experts, carved from one workspace buffer (moe_workspace_layout).
struct MoeWorkspace {
  int32_t* offsets;       // [n_experts + 1] first sorted row of each expert
  int32_t* active;        // [n_experts] experts with tokens, then n_active at active[n_experts]
  int32_t* sorted_pairs;  // [n_pairs] pair index t * top_k + j, grouped by expert
  int32_t* pair_rows;     // [n_pairs] row of pair p in the sorted order
  void* activated;        // bf16 [n_pairs, inter]
  void* expert_out;       // bf16 [n_pairs, hidden]
};
// Byte offsets of the pieces; returns the total size. base null: sizes only.
size_t moe_workspace_layout(void* base, int64_t n_pairs, int64_t n_experts, int64_t hidden,
                            int64_t inter, MoeWorkspace* out);

// Expert weights are bf16, or MXFP4 when the scales are given (ops/moe.h: each row is blocks
// of 16 bytes holding 32 e2m1 codes, one e8m0 scale byte per block).
struct MoeExpertsArgs {
  const void* x;                  // [n_tokens, hidden]
  const int32_t* topk_ids;        // [n_tokens, top_k]
  const float* topk_weights;      // [n_tokens, top_k]
  const void* gate_up;            // [n_experts, 2 inter, hidden]; MXFP4: bytes [.., hidden / 2]
  const void* gate_up_bias;       // [n_experts, 2 inter] or null
  const void* down;               // [n_experts, hidden, inter]; MXFP4: bytes [.., inter / 2]
  const void* down_bias;          // [n_experts, hidden] or null
  const uint8_t* gate_up_scales;  // MXFP4: [n_experts, 2 inter, hidden / 32]; else null
  const uint8_t* down_scales;     // MXFP4: [n_experts, hidden, inter / 32]; else null
  void* out;                      // [n_tokens, hidden]
  int64_t n_tokens, hidden, inter;
  int n_experts, top_k;
  bool interleaved_clamped;  // gpt-oss activation, else SwiGLU on [gate | up]
  float swiglu_limit, swiglu_alpha;
  bool accumulate;
};
// Up to kMoeSmallMaxTokens tokens (decode): one kernel for gate_up and the activation over
// every routed expert, one for down and the weighted combine (bf16 weights: launch_moe_decode's
// streaming kernels where they apply, which read an expert shared by tokens once per pair;
// MXFP4 weights: launch_moe_mxfp4_decode's tensor-core kernels, up to
// kMoeMxfp4DecodeMaxTokens tokens).
// More tokens: sorts the (token, slot) pairs by expert, runs each expert's gate_up and down
// products over its rows, and combines the rows per token in slot order. Each output is
// summed in a fixed order (deterministic).
// On the sorted path, the experts' gate_up and down products run on tensor cores
// (moe_grouped_gemm.cu; bf16 from 5 tokens on, where they beat the CUDA-core kernels; MXFP4
// past kMoeMxfp4DecodeMaxTokens, decoded in shared memory, with hidden and inter sizes up to
// kMoeMxfp4MaxK, whose scale bytes a CTA keeps in shared memory).
inline constexpr int kMoeSmallMaxTokens = 4;
inline constexpr int64_t kMoeMxfp4MaxK = 16384;
// MXFP4 weights stay on launch_moe_mxfp4_decode's kernels up to this many tokens (they can
// serve 8, the mma's N): they read an expert once per (token, slot) pair, and lose to the
// sorted path's grouped tensor-core GEMM from 5 tokens (docs/performance-notes.md, "MoE
// experts"); at 4 tokens and fewer the sorted path is not what would replace them (the
// small-batch kernels would).
inline constexpr int kMoeMxfp4DecodeMaxTokens = 4;
void launch_moe_experts(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                        cudaStream_t stream);

// launch_moe_experts' small-batch path for bf16 weights as two streaming GEMVs over virtual
// rows (moe_decode.cu), where its staged rows fit in shared memory; returns false (launching
// nothing) for MXFP4 weights, where the rows do not fit, or past kMoeSmallMaxTokens tokens.
bool launch_moe_decode(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                       cudaStream_t stream);

// The decode-batch path for MXFP4 weights on tensor cores (moe_mxfp4_decode.cu), up to
// kMoeMxfp4DecodeMaxTokens tokens; returns false (launching nothing) for bf16 weights, past
// those tokens, for hidden or inter sizes that are not multiples of 64 or weights not 16-byte
// aligned (its bulk copies need both), or where the staged input rows leave room for fewer
// than two tiles.
bool launch_moe_mxfp4_decode(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                             cudaStream_t stream);

}  // namespace hadron::cuda
