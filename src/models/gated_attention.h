// Gated full attention of the Qwen3-Next family: q_proj yields each head's query and an output
// gate side by side ([q_h | gate_h] per head); q/k RMSNorm scaling by (1 + w); partial RoPE
// (the cos/sin table's width); paged grouped-query attention; the output times sigmoid(gate)
// before o_proj.
#pragma once

#include <string>

#include "core/arena.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

class GatedAttentionBlock {
 public:
  // prefix: e.g. "model.layers.3.self_attn."
  void declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config);
  // Once the weights are loaded: reorders the projection's rows to [q | k | v | gate] and
  // widens q_norm / k_norm to 1 + w in F32.
  void prepare(Backend& backend);
  // As AttentionBlock::forward.
  void forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
               const Tensor& k_cache, const Tensor& v_cache, const Tensor& cos_sin, Arena& arena,
               const Tensor& out) const;

 private:
  QkvParams qkv_params_;
  Tensor qkv_, q_norm_, k_norm_, o_proj_;  // qkv_: [(2 nq + 2 nkv) d, hidden]
  Buffer q_norm_storage_, k_norm_storage_;
};

}  // namespace hadron
