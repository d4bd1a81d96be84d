#include "models/lightning_indexer.h"

#include <cmath>

namespace hadron {

IndexerParams indexer_params_from_config(const ModelConfig& config) {
  const MlaConfig& mla = config.mla;
  IndexerParams params;
  params.n_heads = mla.index_n_heads;
  params.head_dim = mla.index_head_dim;
  params.rope_dim = mla.qk_rope_head_dim;
  params.top_k = mla.index_topk;
  params.style = mla.index_rope_interleaved ? RopeStyle::kInterleaved : RopeStyle::kNeox;
  // transformers: q.k * index_head_dim^-0.5, weights_proj(x) * index_n_heads^-0.5.
  params.scale = static_cast<float>(
      1.0 / std::sqrt(static_cast<double>(params.head_dim) * static_cast<double>(params.n_heads)));
  return params;
}

void LightningIndexer::declare(WeightPlan& plan, const std::string& prefix,
                               const ModelConfig& config) {
  params_ = indexer_params_from_config(config);
  const int64_t hidden = config.hidden_size, dim = params_.head_dim;
  plan.add(&wq_b_, prefix + "wq_b.weight", {params_.n_heads * dim, config.mla.q_lora_rank});
  plan.add(&wk_, prefix + "wk.weight", {dim, hidden});
  plan.add(&k_norm_, prefix + "k_norm.weight", {dim});
  plan.add(&k_bias_, prefix + "k_norm.bias", {dim});
  plan.add(&weights_proj_, prefix + "weights_proj.weight", {params_.n_heads, hidden});
}

Tensor LightningIndexer::select(Backend& backend, const Tensor& normed, const Tensor& q_resid,
                                const BatchMeta& meta, const Tensor& index_cache,
                                const Tensor& cos_sin, Arena& arena) const {
  const int64_t n_tokens = normed.size(0);
  const DType act = backend.activation_dtype();
  const Tensor q = arena.alloc(act, {n_tokens, params_.n_heads * params_.head_dim});
  const Tensor k = arena.alloc(act, {n_tokens, params_.head_dim});
  const Tensor head_weights = arena.alloc(act, {n_tokens, params_.n_heads});
  backend.linear(q_resid, wq_b_, Tensor{}, q);
  backend.linear(normed, wk_, Tensor{}, k);
  backend.linear(normed, weights_proj_, Tensor{}, head_weights);
  backend.indexer_rope_store(q, k, k_norm_, k_bias_, meta.positions, cos_sin, params_, index_cache,
                             meta.slot_mapping);
  const Tensor selected = arena.alloc(DType::I32, {n_tokens, params_.top_k});
  backend.indexer_select(q, head_weights, index_cache, meta, params_, selected);
  return selected;
}

}  // namespace hadron
