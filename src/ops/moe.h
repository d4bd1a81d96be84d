// Parameters of the mixture-of-experts ops (Backend::moe_route, Backend::moe_experts).
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace hadron {

enum class MoeScoring : uint8_t {
  kSoftmax,  // softmax over all experts (Qwen3-MoE, Mixtral; gpt-oss's softmax over the
             // top-k logits equals the renormalised top-k of this)
  kSigmoid   // independent sigmoids (GLM-4.5, DeepSeek-V3)
};

// How a token's router logits become top_k (expert, weight) pairs:
//   scores = softmax(logits) or sigmoid(logits)
//   choice = scores + correction_bias (when given; used for selection only)
//   grouped selection when n_group > 1: the experts form n_group equal groups, a group's score
//   is the sum of its best two `choice` values, only the best topk_group groups stay eligible
//   ids = the top_k eligible experts by `choice`; weights = scores[ids]
//   normalize: weights /= sum(weights) (+1e-20 for sigmoid scoring); then weights *= scaling.
struct MoeRoutingParams {
  MoeScoring scoring = MoeScoring::kSoftmax;
  int64_t top_k = 1;
  bool normalize = true;
  int64_t n_group = 1;
  int64_t topk_group = 1;
  float scaling = 1.0f;  // routed_scaling_factor
};

enum class MoeActivation : uint8_t {
  kSwiGlu,  // gate_up rows [gate | up]: silu(gate) * up
  // gpt-oss: gate_up rows interleaved (gate = even, up = odd); gate = min(gate, limit),
  // up = clamp(up, -limit, limit), out = (up + 1) * gate * sigmoid(alpha * gate)
  kClampedSwiGluInterleaved
};

struct MoeExpertParams {
  MoeActivation activation = MoeActivation::kSwiGlu;
  float swiglu_limit = 7.0f;
  float swiglu_alpha = 1.702f;
  bool accumulate = false;  // out += the experts' sum instead of out = it
  // Expert parallelism: the weights hold experts [first_expert, first_expert + E) of the
  // n_total_experts the ids index (0: E); tokens routed elsewhere are another rank's. The CPU
  // backend only: others refuse a first_expert or n_total_experts they were not written for.
  int64_t first_expert = 0;
  int64_t n_total_experts = 0;
};

// The stacked weights of E experts with intermediate size I over hidden size H, either in a
// float dtype or in MXFP4 as gpt-oss checkpoints store them: each row is cols/32 blocks of 16
// bytes (two e2m1 codes a byte, the even element in the low nibble) with one e8m0 scale byte
// per block (value 2^(scale - 127)).
struct MoeExpertWeights {
  Tensor gate_up;           // [E, 2I, H]; MXFP4: U8 [E, 2I, H / 2]
  Tensor gate_up_bias;      // [E, 2I] or undefined
  Tensor down;              // [E, H, I]; MXFP4: U8 [E, H, I / 2]
  Tensor down_bias;         // [E, H] or undefined
  Tensor gate_up_scales{};  // MXFP4 only: U8 [E, 2I, H / 32]
  Tensor down_scales{};     // MXFP4 only: U8 [E, H, I / 32]

  bool mxfp4() const { return gate_up_scales.defined(); }
  int64_t n_experts() const { return gate_up.size(0); }
  int64_t hidden() const { return gate_up.size(2) * (mxfp4() ? 2 : 1); }
  int64_t inter() const { return down.size(2) * (mxfp4() ? 2 : 1); }
};

// The value of one e2m1 code (0..15) and of one e8m0 scale byte.
float fp4_e2m1_value(uint8_t code);
float e8m0_value(uint8_t scale);
// Decodes `n_rows` MXFP4 rows of `cols` values (blocks: n_rows * cols / 2 bytes, scales:
// n_rows * cols / 32 bytes) into out [n_rows, cols].
void decode_mxfp4_rows(const uint8_t* blocks, const uint8_t* scales, int64_t n_rows, int64_t cols,
                       float* out);

}  // namespace hadron
