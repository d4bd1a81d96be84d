#include "models/mla_attention.h"

#include <cmath>

#include "models/rope.h"

namespace hadron {

namespace {
// q_a_layernorm and kv_a_layernorm are built without the config's rms_norm_eps in transformers.
constexpr float kLatentNormEps = 1e-6f;
}  // namespace

MlaParams mla_params_from_config(const ModelConfig& config) {
  const MlaConfig& mla = config.mla;
  MlaParams params;
  params.n_heads = config.n_heads;
  params.nope_dim = mla.qk_nope_head_dim;
  params.rope_dim = mla.qk_rope_head_dim;
  params.latent_dim = mla.kv_lora_rank;
  params.v_dim = mla.v_head_dim;
  params.norm_eps = kLatentNormEps;
  params.style = config.rope.interleaved ? RopeStyle::kInterleaved : RopeStyle::kNeox;
  params.scale = static_cast<float>(mla_softmax_mscale(config.rope) /
                                    std::sqrt(static_cast<double>(mla.qk_head_dim)));
  return params;
}

void MlaAttention::declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config) {
  params_ = mla_params_from_config(config);
  q_lora_rank_ = config.mla.q_lora_rank;
  const int64_t hidden = config.hidden_size, nh = params_.n_heads;
  const bool bias = config.attention_bias;
  if (q_lora_rank_ == 0) {
    plan.add(&q_proj_, prefix + "q_proj.weight", {nh * params_.qk_dim(), hidden});
  } else {
    plan.add(&q_a_proj_, prefix + "q_a_proj.weight", {q_lora_rank_, hidden});
    if (bias) plan.add(&q_a_bias_, prefix + "q_a_proj.bias", {q_lora_rank_});
    plan.add(&q_a_norm_, prefix + "q_a_layernorm.weight", {q_lora_rank_});
    plan.add(&q_b_proj_, prefix + "q_b_proj.weight", {nh * params_.qk_dim(), q_lora_rank_});
  }
  plan.add(&kv_a_proj_, prefix + "kv_a_proj_with_mqa.weight", {params_.entry_dim(), hidden});
  if (bias) plan.add(&kv_a_bias_, prefix + "kv_a_proj_with_mqa.bias", {params_.entry_dim()});
  plan.add(&kv_a_norm_, prefix + "kv_a_layernorm.weight", {params_.latent_dim});
  plan.add(&kv_b_proj_, prefix + "kv_b_proj.weight",
           {nh * (params_.nope_dim + params_.v_dim), params_.latent_dim});
  plan.add(&o_proj_, prefix + "o_proj.weight", {hidden, nh * params_.v_dim});
  if (bias) plan.add(&o_bias_, prefix + "o_proj.bias", {hidden});
  if (config.is_sparse_attention()) indexer_.emplace().declare(plan, prefix + "indexer.", config);
}

Tensor MlaAttention::query(Backend& backend, const Tensor& normed, Arena& arena,
                           Tensor& q_resid) const {
  const int64_t n_tokens = normed.size(0);
  const DType act = backend.activation_dtype();
  const Tensor q = arena.alloc(act, {n_tokens, params_.n_heads, params_.qk_dim()});
  const Tensor q_2d = q.reshape({n_tokens, params_.n_heads * params_.qk_dim()});
  if (q_lora_rank_ == 0) {
    backend.linear(normed, q_proj_, Tensor{}, q_2d);
    return q;
  }
  const Tensor q_a = arena.alloc(act, {n_tokens, q_lora_rank_});
  const Tensor q_a_normed = arena.alloc(act, {n_tokens, q_lora_rank_});
  backend.linear(normed, q_a_proj_, q_a_bias_, q_a);
  backend.rms_norm(q_a, q_a_norm_, kLatentNormEps, q_a_normed);
  backend.linear(q_a_normed, q_b_proj_, Tensor{}, q_2d);
  q_resid = q_a_normed;
  return q;
}

void MlaAttention::forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
                           const Tensor& latent_cache, const Tensor& index_cache,
                           const Tensor& cos_sin, Arena& arena, const Tensor& out) const {
  const int64_t n_tokens = input.residual.size(0), nh = params_.n_heads;
  const DType act = backend.activation_dtype();
  const Tensor kv = arena.alloc(act, {n_tokens, params_.entry_dim()});
  // Writes input.normed too, which the query projection reads.
  backend.add_rms_norm_linear(input, kv_a_proj_, kv_a_bias_, kv);
  Tensor q_resid;
  const Tensor q = query(backend, input.normed, arena, q_resid);
  backend.mla_rope_store(q, kv, kv_a_norm_, meta.positions, cos_sin, params_, latent_cache,
                         meta.slot_mapping);
  const Tensor attn = arena.alloc(act, {n_tokens, nh * params_.v_dim});
  if (indexer_) {
    const Tensor selected =
        indexer_->select(backend, input.normed, q_resid, meta, index_cache, cos_sin, arena);
    backend.sparse_mla_attention(q, latent_cache, kv_b_proj_, selected, meta, params_, attn);
  } else {
    backend.mla_attention(q, latent_cache, kv_b_proj_, meta, params_, attn);
  }
  backend.linear(attn, o_proj_, o_bias_, out);
}

}  // namespace hadron
