// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): q from q_proj or through a LoRA
// (q_a_proj, q_a_layernorm, q_b_proj); kv_a_proj_with_mqa gives a compressed latent (normed by
// kv_a_layernorm) and one rope key shared by all heads, which is all the cache keeps;
// kv_b_proj expands the latent into each head's no-rope key and value, folded into the query
// and the output by Backend::mla_attention (the absorbed form); o_proj. With sparse attention
// (DeepSeek-V3.2, GLM-5) a LightningIndexer picks the tokens each query attends to.
#pragma once

#include <optional>
#include <string>

#include "core/arena.h"
#include "kv/kv_cache.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "models/lightning_indexer.h"
#include "ops/backend.h"

namespace hadron {

// The op parameters of a config's MLA layers (softmax scale with DeepSeek's YaRN mscale).
MlaParams mla_params_from_config(const ModelConfig& config);

class MlaAttention {
 public:
  // prefix: e.g. "model.layers.3.self_attn."
  void declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config);

  // input: the residual stream and its norm, which kv_a_proj_with_mqa applies; latent_cache as
  // KvCache::k_cache of a KvLayerSpec::latent layer; index_cache: its KvCache::index_cache
  // (sparse attention only); cos_sin: F32 [max_pos, rope_dim]; out: [T, hidden].
  void forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
               const Tensor& latent_cache, const Tensor& index_cache, const Tensor& cos_sin,
               Arena& arena, const Tensor& out) const;

 private:
  // Returns q [T, n_heads, qk_dim]; q_resid: set to q_a_layernorm's output (q LoRA only).
  Tensor query(Backend& backend, const Tensor& normed, Arena& arena, Tensor& q_resid) const;

  MlaParams params_;
  int64_t q_lora_rank_ = 0;  // 0: q_proj
  Tensor q_proj_, q_a_proj_, q_a_bias_, q_a_norm_, q_b_proj_;
  Tensor kv_a_proj_, kv_a_bias_, kv_a_norm_, kv_b_proj_, o_proj_, o_bias_;
  std::optional<LightningIndexer> indexer_;  // config.is_sparse_attention()
};

}  // namespace hadron
