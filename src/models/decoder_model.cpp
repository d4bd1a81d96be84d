#include "models/decoder_model.h"

#include <utility>

#include "core/error.h"
#include "models/rope.h"
#include "models/weight_prep.h"

namespace hadron {

DecoderModel::DecoderModel(const ModelConfig& config, Backend& backend,
                           const DecoderModelOptions& options)
    : Model(config, backend), options_(options), layers_(config.n_layers) {
  HADRON_CHECK(static_cast<int64_t>(config.layer_types.size()) == config.n_layers,
               "{} layer types for {} layers", config.layer_types.size(), config.n_layers);
  int n_attention = 0, n_linear = 0;
  for (int64_t i = 0; i < config.n_layers; ++i) {
    Layer& layer = layers_[i];
    layer.kind = config.layer_types[i];
    const bool linear = layer.kind == LayerKind::kLinearAttention;
    if (linear && !options.hybrid)
      input_error("{}: layer {} is linear_attention, which {} does not have", config.source, i,
                  config.architecture);
    layer.cache_idx = linear ? n_linear++ : n_attention++;
  }
}

void DecoderModel::declare_weights(WeightPlan& plan) {
  const int64_t hidden = config_.hidden_size;
  const std::string& model = options_.prefix;
  plan.add(&embed_tokens_, model + "embed_tokens.weight", {config_.vocab_size, hidden});
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    const std::string prefix = fmt::format("{}layers.{}.", model, i);
    Layer& layer = layers_[i];
    plan.add(&layer.input_norm, prefix + "input_layernorm.weight", {hidden});
    plan.add(&layer.post_attention_norm, prefix + "post_attention_layernorm.weight", {hidden});
    AttentionOptions attention = options_.attention;
    if (layer.kind == LayerKind::kSlidingAttention)
      attention.sliding_window = static_cast<int>(config_.sliding_window);
    if (layer.kind == LayerKind::kLinearAttention)
      layer.linear.declare(plan, prefix + "linear_attn.", config_, *options_.hybrid);
    else if (options_.hybrid)
      layer.gated_attention.declare(plan, prefix + "self_attn.", config_);
    else if (options_.mla)
      layer.mla.declare(plan, prefix + "self_attn.", config_);
    else
      layer.attention.declare(plan, prefix + "self_attn.", config_, attention);
    layer.sparse = options_.moe.has_value() && is_sparse_layer(config_, i);
    if (layer.sparse)
      layer.moe.declare(plan, prefix, config_, *options_.moe);
    else
      layer.mlp.declare(plan, prefix + "mlp.", hidden, config_.intermediate_size);
  }
  for (int64_t i = 0; i < config_.n_mtp_layers; ++i)  // multi-token prediction: not used
    plan.allow_unused(fmt::format("{}layers.{}.", model, config_.n_layers + i));
  for (const std::string& ignored : options_.ignored) plan.allow_unused(ignored);
  plan.add(&final_norm_, model + "norm.weight", {hidden});
  if (config_.tie_word_embeddings)
    plan.allow_unused("lm_head.weight");  // some tied checkpoints still store a copy
  else
    plan.add(&lm_head_, "lm_head.weight", {config_.vocab_size, hidden});
}

void DecoderModel::prepare(int64_t max_positions) {
  if (config_.tie_word_embeddings) lm_head_ = embed_tokens_;
  for (Layer& layer : layers_) {
    if (layer.sparse) layer.moe.prepare(backend_);
    if (!options_.hybrid) continue;
    if (layer.kind == LayerKind::kLinearAttention)
      layer.linear.prepare(backend_);
    else
      layer.gated_attention.prepare(backend_);
  }
  if (options_.hybrid) offset_norms();
  const int64_t rotary_dim =
      options_.mla ? config_.mla.qk_rope_head_dim : rope_rotary_dim(config_.rope, config_.head_dim);
  const std::vector<float> table = rope_cos_sin_table(config_.rope, rotary_dim, max_positions);
  cos_sin_storage_ = backend_.allocate(table.size() * sizeof(float));
  cos_sin_ = cos_sin_storage_.view(DType::F32, {max_positions, rotary_dim});
  backend_.copy(
      Tensor::view_of(const_cast<float*>(table.data()), DType::F32, {max_positions, rotary_dim}),
      cos_sin_);
}

void DecoderModel::offset_norms() {
  norm_storage_.resize(2 * layers_.size() + 1);
  auto storage = norm_storage_.begin();
  // In the activations' dtype, as the backends' residual norms take their weights; on a bf16
  // backend 1 + w rounds to bf16 once, as the norm's output does anyway.
  const DType dtype = backend_.activation_dtype();
  for (Layer& layer : layers_) {
    layer.input_norm = offset_copy(backend_, layer.input_norm, 1.0f, dtype, *storage++);
    layer.post_attention_norm =
        offset_copy(backend_, layer.post_attention_norm, 1.0f, dtype, *storage++);
  }
  final_norm_ = offset_copy(backend_, final_norm_, 1.0f, dtype, *storage);
}

std::vector<KvLayerSpec> DecoderModel::kv_layers() const {
  std::vector<KvLayerSpec> specs;
  for (const Layer& layer : layers_)
    if (layer.kind != LayerKind::kLinearAttention)
      specs.push_back(
          options_.mla
              ? KvLayerSpec::latent(config_.mla.kv_lora_rank, config_.mla.qk_rope_head_dim,
                                    config_.is_sparse_attention() ? config_.mla.index_head_dim : 0)
              : KvLayerSpec{config_.n_kv_heads, config_.head_dim});
  return specs;
}

std::vector<LinearStateSpec> DecoderModel::state_layers() const {
  std::vector<LinearStateSpec> specs;
  for (const Layer& layer : layers_)
    if (layer.kind == LayerKind::kLinearAttention) specs.push_back(linear_state_spec(config_));
  return specs;
}

void DecoderModel::mix(const Layer& layer, const AddRmsNorm& input, const BatchMeta& meta,
                       const KvCache& kv, Arena& arena, const Tensor& out) {
  const int idx = layer.cache_idx;
  if (layer.kind == LayerKind::kLinearAttention)
    layer.linear.forward(backend_, input, meta, kv.conv_state(idx), kv.recurrent_state(idx), arena,
                         out);
  else if (options_.hybrid)
    layer.gated_attention.forward(backend_, input, meta, kv.k_cache(idx), kv.v_cache(idx), cos_sin_,
                                  arena, out);
  else if (options_.mla)
    layer.mla.forward(backend_, input, meta, kv.k_cache(idx), kv.index_cache(idx), cos_sin_, arena,
                      out);
  else
    layer.attention.forward(backend_, input, meta, kv.k_cache(idx), kv.v_cache(idx), cos_sin_,
                            arena, out);
}

Tensor DecoderModel::forward(const BatchMeta& meta, const KvCache& kv, Arena& arena) {
  const int64_t n_tokens = meta.n_tokens, hidden = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const DType act = backend_.activation_dtype();
  // The residual stream ping-pongs between two buffers: each norm in front of a projection
  // reads one and writes residual + branch to the other (so a backend can fuse it).
  Tensor residual = arena.alloc(act, {n_tokens, hidden});
  Tensor residual_next = arena.alloc(act, {n_tokens, hidden});
  const Tensor normed = arena.alloc(act, {n_tokens, hidden});
  const Tensor branch = arena.alloc(act, {n_tokens, hidden});  // attention or MLP output
  backend_.embedding(meta.token_ids, embed_tokens_, residual);
  // The norm in front of the next projection; adds `branch` unless this is the first layer's.
  const auto pre_norm = [&](const Tensor& weight, bool add_branch) {
    return AddRmsNorm{add_branch ? branch : Tensor{},
                      residual,
                      add_branch ? residual_next : Tensor{},
                      weight,
                      eps,
                      normed};
  };
  const auto advance = [&] { std::swap(residual, residual_next); };
  const size_t layer_mark = arena.used();
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = layers_[i];
    mix(layer, pre_norm(layer.input_norm, i > 0), meta, kv, arena, branch);
    if (i > 0) advance();
    if (layer.sparse) {  // the router and the experts both read the normed input
      backend_.add_rms_norm(branch, residual, layer.post_attention_norm, eps, normed);
      layer.moe.forward(backend_, normed, arena, branch);
    } else {
      layer.mlp.forward(backend_, pre_norm(layer.post_attention_norm, true), arena, branch);
      advance();
    }
    arena.rewind(layer_mark);
  }
  backend_.add_rms_norm(branch, residual, final_norm_, eps, normed);
  // Increasing rows, as many as tokens (every decode step): all rows in order, no gather.
  if (meta.logits_rows.size(0) == n_tokens) return normed;
  const Tensor rows = arena.alloc(act, {meta.logits_rows.size(0), hidden});
  backend_.gather_rows(normed, meta.logits_rows, rows);
  return rows;
}

void DecoderModel::compute_logits(const Tensor& hidden, const Tensor& logits) {
  backend_.linear(hidden, lm_head_, Tensor{}, logits);
}

}  // namespace hadron
