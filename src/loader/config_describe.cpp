// describe(ModelConfig): the normalised fields, one topic per line, for `hadron inspect`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "loader/hf_config.h"

namespace hadron {
namespace {

std::string_view layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kFullAttention:
      return "full";
    case LayerKind::kSlidingAttention:
      return "sliding";
    case LayerKind::kLinearAttention:
      return "linear";
  }
  return "?";
}

// "full x12, sliding x12" in order of first appearance.
std::string layer_summary(const std::vector<LayerKind>& kinds) {
  std::vector<std::pair<LayerKind, int>> counts;
  for (LayerKind kind : kinds) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [kind](const auto& entry) { return entry.first == kind; });
    if (it == counts.end())
      counts.emplace_back(kind, 1);
    else
      ++it->second;
  }
  std::string text;
  for (const auto& [kind, count] : counts)
    text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", layer_kind_name(kind), count);
  return text;
}

std::string describe_rope(const RopeConfig& rope) {
  std::string text = fmt::format("rope: {} theta {}", rope.type, rope.theta);
  if (rope.factor != 1.0) text += fmt::format(" factor {}", rope.factor);
  if (rope.original_max_position_embeddings > 0)
    text += fmt::format(" original_max_positions {}", rope.original_max_position_embeddings);
  if (rope.partial_rotary_factor != 1.0)
    text += fmt::format(" partial_rotary_factor {}", rope.partial_rotary_factor);
  if (!rope.mrope_section.empty())
    text += fmt::format(" mrope_section [{}]{}", fmt::join(rope.mrope_section, ", "),
                        rope.mrope_interleaved ? " interleaved" : "");
  if (rope.interleaved) text += " (adjacent pairs)";
  return text + "\n";
}

std::string describe_moe(const MoeConfig& moe) {
  if (moe.n_experts == 0) return "";
  std::string text =
      fmt::format("moe: {} experts, top-{}, expert intermediate {}, {} shared ({}), scoring {}{}\n",
                  moe.n_experts, moe.n_experts_per_token, moe.expert_intermediate_size,
                  moe.n_shared_experts, moe.shared_expert_intermediate_size, moe.scoring_func,
                  moe.norm_topk_prob ? " normalised" : "");
  if (moe.n_group > 1 || !moe.topk_method.empty())
    text += fmt::format("moe routing: {} groups, top-{} groups, method {}, scale {}\n", moe.n_group,
                        moe.topk_group, moe.topk_method, moe.routed_scaling_factor);
  if (moe.first_k_dense_replace > 0 || !moe.mlp_only_layers.empty() || moe.decoder_sparse_step > 1)
    text += fmt::format("moe dense layers: first {}, mlp_only [{}], sparse step {}\n",
                        moe.first_k_dense_replace, fmt::join(moe.mlp_only_layers, ", "),
                        moe.decoder_sparse_step);
  return text;
}

std::string describe_attention_variants(const ModelConfig& config) {
  std::string text;
  const MlaConfig& mla = config.mla;
  if (config.is_mla())
    text += fmt::format("mla: q_lora_rank {} kv_lora_rank {} qk_nope {} qk_rope {} v {}\n",
                        mla.q_lora_rank, mla.kv_lora_rank, mla.qk_nope_head_dim,
                        mla.qk_rope_head_dim, mla.v_head_dim);
  if (mla.index_topk > 0)
    text += fmt::format("sparse attention indexer: {} heads x {}, top-{}\n", mla.index_n_heads,
                        mla.index_head_dim, mla.index_topk);
  const LinearAttentionConfig& linear = config.linear_attention;
  if (linear.n_value_heads > 0)
    text +=
        fmt::format("linear attention: {} key heads x {}, {} value heads x {}, conv {}, state {}\n",
                    linear.n_key_heads, linear.key_head_dim, linear.n_value_heads,
                    linear.value_head_dim, linear.conv_kernel_dim, dtype_name(linear.state_dtype));
  if (config.attn_output_gate) text += "attention output gate: sigmoid, from q_proj\n";
  return text;
}

}  // namespace

std::string describe(const ModelConfig& config) {
  std::string text = fmt::format("architecture: {} ({}) from {}\n", config.architecture,
                                 config.model_type, config.source);
  text += fmt::format("layers: {} ({}), hidden {}, intermediate {}, vocab {}, dtype {}\n",
                      config.n_layers, layer_summary(config.layer_types), config.hidden_size,
                      config.intermediate_size, config.vocab_size, dtype_name(config.dtype));
  text += fmt::format(
      "attention: {} heads, {} kv heads, head_dim {}{}{}\n", config.n_heads, config.n_kv_heads,
      config.head_dim, config.attention_bias ? ", bias" : "",
      config.sliding_window > 0 ? fmt::format(", sliding window {}", config.sliding_window) : "");
  text += fmt::format("max positions {}, rms_norm_eps {}, act {}, tied embeddings {}\n",
                      config.max_position_embeddings, config.rms_norm_eps, config.hidden_act,
                      config.tie_word_embeddings);
  text +=
      describe_rope(config.rope) + describe_moe(config.moe) + describe_attention_variants(config);
  if (config.n_mtp_layers > 0) text += fmt::format("mtp layers: {}\n", config.n_mtp_layers);
  const QuantConfig& quant = config.quant;
  if (!quant.method.empty()) {
    text += fmt::format("quantization: {}", quant.method);
    if (!quant.fmt.empty()) text += " " + quant.fmt;
    if (!quant.weight_block_size.empty())
      text += fmt::format(", block [{}]", fmt::join(quant.weight_block_size, ", "));
    if (!quant.activation_scheme.empty())
      text += fmt::format(", {} activation scales", quant.activation_scheme);
    text += fmt::format(", {} modules not converted\n", quant.modules_to_not_convert.size());
  }
  text += fmt::format("eos token ids: [{}]", fmt::join(config.eos_token_ids, ", "));
  return text;
}

}  // namespace hadron
