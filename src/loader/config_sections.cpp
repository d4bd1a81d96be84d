#include "loader/config_sections.h"

#include <algorithm>
#include <array>

#include "core/error.h"

namespace hadron {
namespace {

constexpr std::array<std::string_view, 7> kRopeTypes = {"default", "linear",   "dynamic", "llama3",
                                                        "yarn",    "longrope", "mrope"};

// transformers 5 may key rope parameters by layer type; the full-attention ones apply here.
std::optional<ConfigReader> rope_parameters(const ConfigReader& config) {
  std::optional<ConfigReader> params =
      config.child(config.has("rope_parameters") ? "rope_parameters" : "rope_scaling");
  if (params && !params->has("rope_type") && !params->has("type") && params->has("full_attention"))
    return params->child("full_attention");
  return params;
}

void validate_rope(const RopeConfig& rope, const ConfigReader& params) {
  if (std::find(kRopeTypes.begin(), kRopeTypes.end(), rope.type) == kRopeTypes.end())
    params.fail("rope_type", "'" + rope.type + "' is not supported (supported: default, " +
                                 "linear, dynamic, llama3, yarn, longrope, mrope)");
  if (rope.theta <= 0) params.fail("rope_theta", "must be positive");
  if (rope.factor <= 0) params.fail("factor", "must be positive");
  if (rope.partial_rotary_factor <= 0 || rope.partial_rotary_factor > 1)
    params.fail("partial_rotary_factor", "must be in (0, 1]");
  const bool needs_original = rope.type == "llama3" || rope.type == "yarn";
  if (needs_original && rope.original_max_position_embeddings <= 0)
    params.fail("original_max_position_embeddings", "is required by " + rope.type + " rope");
  if (rope.type == "llama3" &&
      !(rope.low_freq_factor > 0 && rope.high_freq_factor > rope.low_freq_factor))
    params.fail("high_freq_factor", "must exceed low_freq_factor, which must be positive");
  if (rope.type == "yarn" && !(rope.beta_fast > 0 && rope.beta_slow > 0))
    params.fail("beta_fast", "and beta_slow must be positive");
}

}  // namespace

int64_t bounded_integer(const ConfigReader& config, std::string_view key, int64_t fallback,
                        int64_t max) {
  const int64_t value = config.integer(key, fallback);
  if (value > max) config.fail(key, "is too large: " + std::to_string(value));
  return value;
}

RopeConfig read_rope(const ConfigReader& config, int64_t max_position_embeddings) {
  const std::optional<ConfigReader> found = rope_parameters(config);
  const ConfigReader params = found ? *found : ConfigReader({}, config.source(), "rope_scaling.");
  RopeConfig rope;
  rope.type = params.string("rope_type", params.string("type", "default"));
  rope.theta = params.number("rope_theta", config.number("rope_theta", rope.theta));
  rope.factor = params.number("factor", rope.factor);
  rope.partial_rotary_factor = params.number(
      "partial_rotary_factor", config.number("partial_rotary_factor", rope.partial_rotary_factor));
  rope.low_freq_factor = params.number("low_freq_factor", rope.low_freq_factor);
  rope.high_freq_factor = params.number("high_freq_factor", rope.high_freq_factor);
  rope.original_max_position_embeddings = params.integer(
      "original_max_position_embeddings", config.integer("original_max_position_embeddings", 0));
  if (rope.type == "yarn" && rope.original_max_position_embeddings == 0)
    rope.original_max_position_embeddings = max_position_embeddings;  // as transformers
  rope.beta_fast = params.number("beta_fast", rope.beta_fast);
  rope.beta_slow = params.number("beta_slow", rope.beta_slow);
  rope.mscale = params.number("mscale", rope.mscale);
  rope.mscale_all_dim = params.number("mscale_all_dim", rope.mscale_all_dim);
  rope.attention_factor = params.number("attention_factor", rope.attention_factor);
  rope.truncate = params.boolean("truncate", rope.truncate);
  rope.mrope_section = params.integers("mrope_section");
  rope.mrope_interleaved = params.boolean("mrope_interleaved", false);
  rope.interleaved = config.boolean("rope_interleave", false);
  validate_rope(rope, params);
  return rope;
}

MoeConfig read_moe(const ConfigReader& config, int64_t intermediate_size, int64_t n_layers) {
  MoeConfig moe;
  moe.n_experts = bounded_integer(
      config, "num_experts",
      config.integer("num_local_experts", config.integer("n_routed_experts", 0)), 1 << 20);
  if (moe.n_experts == 0) return moe;
  moe.n_experts_per_token =
      config.integer("num_experts_per_tok", config.integer("experts_per_token", 0));
  if (moe.n_experts_per_token < 1 || moe.n_experts_per_token > moe.n_experts)
    config.fail("num_experts_per_tok", "must be between 1 and the number of experts");
  moe.expert_intermediate_size =
      bounded_integer(config, "moe_intermediate_size", intermediate_size, kMaxDim);
  if (moe.expert_intermediate_size <= 0)
    config.fail("moe_intermediate_size", "is missing (nor is intermediate_size given)");
  moe.shared_expert_intermediate_size =
      bounded_integer(config, "shared_expert_intermediate_size", 0, kMaxDim);
  moe.n_shared_experts = bounded_integer(config, "n_shared_experts",
                                         moe.shared_expert_intermediate_size > 0 ? 1 : 0, 1024);
  if (moe.shared_expert_intermediate_size == 0)
    moe.shared_expert_intermediate_size = moe.n_shared_experts * moe.expert_intermediate_size;
  moe.norm_topk_prob = config.boolean("norm_topk_prob", moe.norm_topk_prob);
  moe.scoring_func = config.string("scoring_func", moe.scoring_func);
  if (moe.scoring_func != "softmax" && moe.scoring_func != "sigmoid")
    config.fail("scoring_func", "must be softmax or sigmoid, got '" + moe.scoring_func + "'");
  moe.topk_method = config.string("topk_method", "");
  moe.n_group = config.integer("n_group", 1);
  if (moe.n_group < 1 || moe.n_experts % moe.n_group != 0)
    config.fail("n_group", "must be positive and divide the number of experts");
  moe.topk_group = config.integer("topk_group", 1);
  if (moe.topk_group < 1 || moe.topk_group > moe.n_group)
    config.fail("topk_group", "must be between 1 and n_group");
  moe.routed_scaling_factor = config.number("routed_scaling_factor", 1.0);
  moe.decoder_sparse_step = config.integer("decoder_sparse_step", 1);
  if (moe.decoder_sparse_step < 1) config.fail("decoder_sparse_step", "must be positive");
  moe.mlp_only_layers = config.integers("mlp_only_layers");
  for (int64_t layer : moe.mlp_only_layers)
    if (layer < 0 || layer >= n_layers) config.fail("mlp_only_layers", "names a missing layer");
  moe.first_k_dense_replace = config.integer("first_k_dense_replace", 0);
  // At or past num_hidden_layers every layer is dense, as transformers and vLLM read it (a real
  // config run with fewer layers through --hf-overrides).
  if (moe.first_k_dense_replace < 0) config.fail("first_k_dense_replace", "must be >= 0");
  moe.router_aux_loss_coef = config.number("router_aux_loss_coef", 0.0);
  return moe;
}

// The lightning indexer of DeepSeek sparse attention (index_topk > 0).
void read_indexer(const ConfigReader& config, MlaConfig& mla) {
  if (mla.index_n_heads <= 0) config.fail("index_n_heads", "must be positive with index_topk");
  if (mla.index_head_dim < mla.qk_rope_head_dim)
    config.fail("index_head_dim", "must be at least qk_rope_head_dim (the indexer's rope part)");
  if (mla.q_lora_rank <= 0)
    config.fail("q_lora_rank", "must be positive with index_topk (the indexer's query input)");
  // Absent (DeepSeek-V3.2): rotate halves, as transformers' DeepSeek-V3.2 indexer and vLLM do.
  mla.index_rope_interleaved = config.boolean("indexer_rope_interleave", false);
  // "shared" layers reuse the previous layer's selection (IndexCache, arXiv 2603.12201).
  for (const std::string& type : config.strings("indexer_types"))
    if (type != "full")
      config.fail("indexer_types", "holds '" + type + "': only 'full' indexers are supported");
}

MlaConfig read_mla(const ConfigReader& config) {
  MlaConfig mla;
  mla.kv_lora_rank = bounded_integer(config, "kv_lora_rank", 0, kMaxDim);
  if (mla.kv_lora_rank == 0) return mla;
  mla.q_lora_rank = bounded_integer(config, "q_lora_rank", 0, kMaxDim);
  mla.qk_nope_head_dim = bounded_integer(config, "qk_nope_head_dim", 0, kMaxDim);
  mla.qk_rope_head_dim = bounded_integer(config, "qk_rope_head_dim", 0, kMaxDim);
  mla.v_head_dim = bounded_integer(config, "v_head_dim", 0, kMaxDim);
  if (mla.qk_rope_head_dim <= 0) config.fail("qk_rope_head_dim", "must be positive for MLA");
  if (mla.v_head_dim <= 0) config.fail("v_head_dim", "must be positive for MLA");
  mla.qk_head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  if (config.integer("qk_head_dim", mla.qk_head_dim) != mla.qk_head_dim)
    config.fail("qk_head_dim", "must equal qk_nope_head_dim + qk_rope_head_dim");
  mla.index_n_heads = bounded_integer(config, "index_n_heads", 0, kMaxDim);
  mla.index_head_dim = bounded_integer(config, "index_head_dim", 0, kMaxDim);
  mla.index_topk = config.integer("index_topk", 0);
  if (mla.index_topk > 0) read_indexer(config, mla);
  return mla;
}

LinearAttentionConfig read_linear_attention(const ConfigReader& config) {
  LinearAttentionConfig linear;
  linear.n_key_heads = bounded_integer(config, "linear_num_key_heads", 0, kMaxDim);
  linear.n_value_heads = bounded_integer(config, "linear_num_value_heads", 0, kMaxDim);
  linear.key_head_dim = bounded_integer(config, "linear_key_head_dim", 0, kMaxDim);
  linear.value_head_dim = bounded_integer(config, "linear_value_head_dim", 0, kMaxDim);
  linear.conv_kernel_dim = bounded_integer(config, "linear_conv_kernel_dim", 0, kMaxDim);
  linear.full_attention_interval =
      bounded_integer(config, "full_attention_interval", 0, kMaxLayers);
  const std::string state_dtype = config.string("mamba_ssm_dtype", "float32");
  if (state_dtype == "float32")
    linear.state_dtype = DType::F32;
  else if (state_dtype == "bfloat16")
    linear.state_dtype = DType::BF16;
  else
    config.fail("mamba_ssm_dtype", "'" + state_dtype + "' is not supported (float32, bfloat16)");
  return linear;
}

QuantConfig read_quant(const ConfigReader& config) {
  const std::optional<ConfigReader> params = config.child("quantization_config");
  QuantConfig quant;
  if (!params) return quant;
  quant.method = params->string("quant_method", "");
  if (quant.method.empty()) params->fail("quant_method", "is missing");
  quant.fmt = params->string("fmt", "");
  quant.activation_scheme = params->string("activation_scheme", "");
  quant.weight_block_size = params->integers("weight_block_size");
  const bool positive = std::all_of(quant.weight_block_size.begin(), quant.weight_block_size.end(),
                                    [](int64_t size) { return size > 0 && size <= kMaxDim; });
  if (!quant.weight_block_size.empty() && (quant.weight_block_size.size() != 2 || !positive))
    params->fail("weight_block_size", "must be [rows, columns] of positive sizes");
  quant.modules_to_not_convert = params->strings("modules_to_not_convert");
  quant.scale_fmt = params->string("scale_fmt", "");
  return quant;
}

std::vector<LayerKind> read_layer_types(const ConfigReader& config, int64_t n_layers,
                                        int64_t sliding_window, int64_t full_attention_interval) {
  std::vector<LayerKind> kinds;
  if (config.has("layer_types")) {
    const std::vector<std::string> names = config.strings("layer_types");
    if (static_cast<int64_t>(names.size()) != n_layers)
      config.fail("layer_types", "has " + std::to_string(names.size()) + " entries for " +
                                     std::to_string(n_layers) + " layers");
    for (const std::string& name : names) {
      // DeepSeek-V3.2 / GLM-5 name their layers deepseek_sparse_attention: attention over the
      // whole causal context, of which the indexer (MlaConfig::index_topk) picks the keys.
      if (name == "full_attention" || name == "deepseek_sparse_attention")
        kinds.push_back(LayerKind::kFullAttention);
      else if (name == "sliding_attention")
        kinds.push_back(LayerKind::kSlidingAttention);
      else if (name == "linear_attention")
        kinds.push_back(LayerKind::kLinearAttention);
      else
        config.fail("layer_types", "holds '" + name + "' (supported: full_attention, " +
                                       "sliding_attention, linear_attention, " +
                                       "deepseek_sparse_attention)");
    }
    return kinds;
  }
  // Qwen2/3 style: with a window, layers from max_window_layers on slide.
  const int64_t first_sliding = config.integer("max_window_layers", 0);
  for (int64_t i = 0; i < n_layers; ++i) {
    if (full_attention_interval > 0)
      kinds.push_back((i + 1) % full_attention_interval == 0 ? LayerKind::kFullAttention
                                                             : LayerKind::kLinearAttention);
    else if (sliding_window > 0 && i >= first_sliding)
      kinds.push_back(LayerKind::kSlidingAttention);
    else
      kinds.push_back(LayerKind::kFullAttention);
  }
  return kinds;
}

}  // namespace hadron
