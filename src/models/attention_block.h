// Self-attention with options: fused qkv (+bias), optional per-head q/k RMSNorm, RoPE,
// paged KV cache, grouped-query attention (optionally with sink logits), output projection
// (+bias). Under tensor parallelism a rank holds whole heads and its output is a partial sum:
// the caller all-reduces it (so does GatedMlp's).
#pragma once

#include <string>

#include "core/arena.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

struct AttentionOptions {
  bool qkv_bias = false;  // biases on q/k/v projections
  bool o_bias = false;    // bias on the output projection (gpt-oss)
  bool sinks = false;     // a learned softmax sink logit per head (gpt-oss)
  bool qk_norm = false;   // RMSNorm over head_dim on q and k before RoPE
  RopeStyle rope_style = RopeStyle::kNeox;
  int sliding_window = 0;
};

class AttentionBlock {
 public:
  // prefix: e.g. "model.layers.3.self_attn."
  void declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config,
               const AttentionOptions& options);

  // input: the residual stream and its norm, which the qkv projection applies (fused where
  // the backend can); out: [T, hidden].
  void forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
               const Tensor& k_cache, const Tensor& v_cache, const Tensor& cos_sin, Arena& arena,
               const Tensor& out) const;

 private:
  AttentionOptions options_;
  QkvParams qkv_params_;  // this rank's heads
  bool adds_o_bias_ = true;
  Tensor qkv_, qkv_bias_, q_norm_, k_norm_, o_proj_, o_bias_, sinks_;
  Fp8Weight qkv_fp8_, o_fp8_;  // defined when the loader kept qkv_ / o_proj_ in FP8
};

// A SwiGLU MLP: down(silu(gate(x)) * up(x)) with gate and up fused.
class GatedMlp {
 public:
  // prefix: e.g. "model.layers.3.mlp."
  void declare(WeightPlan& plan, const std::string& prefix, int64_t hidden, int64_t intermediate);
  // x: normed input [T, hidden]; out: [T, hidden].
  void forward(Backend& backend, const Tensor& x, Arena& arena, const Tensor& out) const;
  // As above, the norm in front applied by the gate/up projection (fused where the backend can).
  void forward(Backend& backend, const AddRmsNorm& input, Arena& arena, const Tensor& out) const;

 private:
  void down(Backend& backend, const Tensor& gate_up, Arena& arena, const Tensor& out) const;

  int64_t intermediate_ = 0;  // this rank's part
  Tensor gate_up_, down_;
  Fp8Weight gate_up_fp8_, down_fp8_;  // defined when the loader kept them in FP8
};

}  // namespace hadron
