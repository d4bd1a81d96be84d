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
  n_local_kv_heads_ = config.n_kv_heads;
}

void DecoderModel::set_tensor_parallel(const TensorParallel& tp) {
  HADRON_CHECK(tp.world == 1 || (tp.comm != nullptr && tp.comm->world_size() == tp.world &&
                                 tp.comm->rank() == tp.rank),
               "rank {} of {} without its communicator", tp.rank, tp.world);
  if (tp.world > 1 && (options_.mla || options_.hybrid))
    input_error("tensor parallelism does not shard {} ({} attention) yet", config_.architecture,
                options_.mla ? "latent" : "linear");
  tp_ = tp;
  const WeightPlan plan(tp.rank, tp.world);
  plan.slice(Shard::kColumn, config_.n_heads, "num_attention_heads");  // the first to check
  n_local_kv_heads_ =
      config_.n_kv_heads /
      plan.slice(Shard::kColumn, config_.n_kv_heads, "num_key_value_heads", true).n_parts;
  vocab_parallel_ = tp.world > 1 && config_.vocab_size % tp.world == 0;
}

void DecoderModel::declare_weights(WeightPlan& plan) {
  HADRON_CHECK(plan.rank() == tp_.rank && plan.world() == tp_.world,
               "a plan for rank {} of {} declared by rank {} of {}", plan.rank(), plan.world(),
               tp_.rank, tp_.world);
  plan.set_expert_parallel(tp_.expert_parallel);
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
    plan.add(&lm_head_, "lm_head.weight", {config_.vocab_size, hidden},
             vocab_parallel_ ? plan.slice(Shard::kColumn, config_.vocab_size, "vocab_size")
                             : ShardSlice{});
}

void DecoderModel::prepare(int64_t max_positions) {
  if (config_.tie_word_embeddings) {
    const int64_t rows = config_.vocab_size / (vocab_parallel_ ? tp_.world : 1);
    lm_head_ = vocab_parallel_ ? embed_tokens_.slice_rows(tp_.rank * rows, (tp_.rank + 1) * rows)
                               : embed_tokens_;
  }
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
              : KvLayerSpec{n_local_kv_heads_, config_.head_dim});
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
    all_reduce(branch);
    if (i > 0) advance();
    if (layer.sparse) {  // the router and the experts both read the normed input
      backend_.add_rms_norm(branch, residual, layer.post_attention_norm, eps, normed);
      layer.moe.forward(backend_, normed, arena, branch);
    } else {
      layer.mlp.forward(backend_, pre_norm(layer.post_attention_norm, true), arena, branch);
      advance();
    }
    all_reduce(branch);
    arena.rewind(layer_mark);
  }
  backend_.add_rms_norm(branch, residual, final_norm_, eps, normed);
  // Increasing rows, as many as tokens (every decode step): all rows in order, no gather.
  if (meta.logits_rows.size(0) == n_tokens) return normed;
  const Tensor rows = arena.alloc(act, {meta.logits_rows.size(0), hidden});
  backend_.gather_rows(normed, meta.logits_rows, rows);
  return rows;
}

void DecoderModel::all_reduce(const Tensor& x) const {
  if (tp_.world > 1) tp_.comm->all_reduce_sum(x);
}

void DecoderModel::compute_logits(const Tensor& hidden, const Tensor& logits) {
  if (!vocab_parallel_) return backend_.linear(hidden, lm_head_, Tensor{}, logits);
  // This rank's vocabulary columns [R, V / world], gathered rank-major [world, R, V / world],
  // then each rank's block of each row copied to its place in logits [R, V].
  const int64_t n_rows = hidden.size(0), n_cols = lm_head_.size(0), world = tp_.world;
  const size_t local_bytes = n_rows * n_cols * sizeof(float);
  if (logits_storage_.bytes() < local_bytes * (world + 1))
    logits_storage_ = backend_.allocate(local_bytes * (world + 1));
  const auto base = static_cast<char*>(logits_storage_.data());
  const Tensor local = Tensor::view_of(base, DType::F32, {n_rows, n_cols}, logits.device);
  const Tensor gathered =
      Tensor::view_of(base + local_bytes, DType::F32, {world, n_rows, n_cols}, logits.device);
  backend_.linear(hidden, lm_head_, Tensor{}, local);
  tp_.comm->all_gather(local, gathered);
  for (int64_t r = 0; r < world; ++r)
    for (int64_t row = 0; row < n_rows; ++row)
      backend_.copy(Tensor::view_of(gathered.ptr<float>() + (r * n_rows + row) * n_cols, DType::F32,
                                    {n_cols}, logits.device),
                    Tensor::view_of(logits.ptr<float>() + row * world * n_cols + r * n_cols,
                                    DType::F32, {n_cols}, logits.device));
}

}  // namespace hadron
