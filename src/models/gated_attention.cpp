#include "models/gated_attention.h"

#include <cmath>

#include "core/error.h"
#include "models/weight_prep.h"

namespace hadron {

void GatedAttentionBlock::declare(WeightPlan& plan, const std::string& prefix,
                                  const ModelConfig& config) {
  if (config.attention_bias)
    input_error("{}: gated attention with attention_bias is not supported", config.source);
  const int64_t hidden = config.hidden_size, d = config.head_dim;
  const int64_t nq = config.n_heads, nkv = config.n_kv_heads;
  qkv_params_ = {nq, nkv, d, static_cast<float>(config.rms_norm_eps), RopeStyle::kNeox};
  plan.add_merged(&qkv_, {{prefix + "q_proj.weight", {2 * nq * d, hidden}},
                          {prefix + "k_proj.weight", {nkv * d, hidden}},
                          {prefix + "v_proj.weight", {nkv * d, hidden}}});
  plan.add(&q_norm_, prefix + "q_norm.weight", {d});
  plan.add(&k_norm_, prefix + "k_norm.weight", {d});
  plan.add(&o_proj_, prefix + "o_proj.weight", {hidden, nq * d});
}

void GatedAttentionBlock::prepare(Backend& backend) {
  const int64_t nq = qkv_params_.n_heads, d = qkv_params_.head_dim;
  const int64_t kv_rows = 2 * qkv_params_.n_kv_heads * d;
  std::vector<int64_t> order;
  for (int64_t h = 0; h < nq; ++h) append_rows(order, 2 * h * d, d);      // queries
  append_rows(order, 2 * nq * d, kv_rows);                                // k and v
  for (int64_t h = 0; h < nq; ++h) append_rows(order, 2 * h * d + d, d);  // gates
  permute_rows(backend, qkv_, order);
  q_norm_ = offset_copy(backend, q_norm_, 1.0f, backend.activation_dtype(), q_norm_storage_);
  k_norm_ = offset_copy(backend, k_norm_, 1.0f, backend.activation_dtype(), k_norm_storage_);
}

void GatedAttentionBlock::forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
                                  const Tensor& k_cache, const Tensor& v_cache,
                                  const Tensor& cos_sin, Arena& arena, const Tensor& out) const {
  const int64_t n_tokens = input.residual.size(0), nq = qkv_params_.n_heads;
  const int64_t d = qkv_params_.head_dim, width = (nq + 2 * qkv_params_.n_kv_heads) * d;
  const DType act = backend.activation_dtype();
  const Tensor gate = arena.alloc(act, {n_tokens, nq * d});
  backend.add_rms_norm_linear(input, qkv_.slice_rows(width, width + nq * d), Tensor{}, gate);
  const Tensor qkv = arena.alloc(act, {n_tokens, width});
  backend.linear(input.normed, qkv_.slice_rows(0, width), Tensor{}, qkv);
  const Tensor q = arena.alloc(act, {n_tokens, nq, d});
  backend.qkv_rope_store(qkv, q_norm_, k_norm_, meta.positions, cos_sin, qkv_params_, k_cache,
                         v_cache, meta.slot_mapping, q);
  const Tensor attn = arena.alloc(act, {n_tokens, nq, d});
  const AttentionParams params{1.0f / std::sqrt(static_cast<float>(d)), 0, 0.0f, Tensor{}};
  backend.attention(q, k_cache, v_cache, meta, params, attn);
  const Tensor gated = arena.alloc(act, {n_tokens, nq * d});
  backend.sigmoid_mul(attn.reshape({n_tokens, nq * d}), gate, gated);
  backend.linear(gated, o_proj_, Tensor{}, out);
}

}  // namespace hadron
