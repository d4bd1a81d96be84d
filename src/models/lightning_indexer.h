// DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5): per token, wq_b turns
// MLA's q LoRA output into index_n_heads query heads, wk with k_norm (a LayerNorm with bias)
// the token's hidden state into one key, kept in the layer's index cache, and weights_proj
// gives each head's weight; the top index_topk earlier tokens by ReLU-weighted score are the
// only ones MLA attends to (Backend::indexer_select).
//
// The reference implementation scores in FP8 after a Hadamard rotation of q and k; the
// rotation preserves dot products and transformers (our reference) skips both, as does this
// block: keys are cached in the KV pool's dtype.
#pragma once

#include <string>

#include "core/arena.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

// The op parameters of a config's indexer (needs config.is_sparse_attention()).
IndexerParams indexer_params_from_config(const ModelConfig& config);

class LightningIndexer {
 public:
  // prefix: e.g. "model.layers.3.self_attn.indexer."
  void declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config);

  // normed: the layer's normed input [T, hidden]; q_resid: MLA's q_a_layernorm output
  // [T, q_lora_rank]; index_cache: KvCache::index_cache of the layer; cos_sin: F32
  // [max_pos, rope_dim]. Writes this step's keys and returns I32 [T, index_topk], the
  // positions each token attends to (-1: none).
  Tensor select(Backend& backend, const Tensor& normed, const Tensor& q_resid,
                const BatchMeta& meta, const Tensor& index_cache, const Tensor& cos_sin,
                Arena& arena) const;

 private:
  IndexerParams params_;
  Tensor wq_b_, wk_, k_norm_, k_bias_, weights_proj_;
};

}  // namespace hadron
