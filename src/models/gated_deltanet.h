// Gated DeltaNet, the linear-attention token mixer of Qwen3-Next and Qwen3.5: one input
// projection to q, k, v (through a causal depthwise convolution with SiLU), the output gate z
// and the per-head b, a; the gated delta rule over a per-sequence recurrent state; RMSNorm
// gated by silu(z); the output projection. Conv and recurrent state live in KvCache slots.
#pragma once

#include <string>

#include "core/arena.h"
#include "core/buffer.h"
#include "kv/kv_cache.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

enum class DeltaNetProjections : uint8_t {
  // Qwen3-Next: in_proj_qkvz and in_proj_ba, rows grouped per key head ([q k v z] and [b a]
  // for each), reordered at prepare into the layout below
  kGroupedPerKeyHead,
  // Qwen3.5: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a
  kSeparate
};

LinearAttentionParams linear_attention_params(const ModelConfig& config);
LinearStateSpec linear_state_spec(const ModelConfig& config);

class GatedDeltaNet {
 public:
  // prefix: e.g. "model.layers.0.linear_attn."
  void declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config,
               DeltaNetProjections projections);
  // Once the weights are loaded: puts the input projection's rows in [q | k | v | z | b | a]
  // order.
  void prepare(Backend& backend);
  // input: the residual stream and its norm, which the input projection applies; conv_state,
  // recurrent_state: the layer's slots (KvCache); out: [T, hidden].
  void forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
               const Tensor& conv_state, const Tensor& recurrent_state, Arena& arena,
               const Tensor& out) const;

 private:
  DeltaNetProjections projections_ = DeltaNetProjections::kSeparate;
  LinearAttentionParams params_;
  float eps_ = 1e-6f;
  // in_proj_: [conv_dim + value_dim + 2 Hv, hidden] after prepare; conv_: [conv_dim, 1, K]
  Tensor in_proj_, conv_, a_log_, dt_bias_, norm_, out_proj_;
  Buffer a_log_f32_, dt_bias_f32_;  // the decay's parameters, widened (see prepare)
};

}  // namespace hadron
