// The only place architecture strings appear.
#include "models/registry.h"

#include <utility>

#include "core/error.h"
#include "models/gated_deltanet.h"
#include "models/mla_attention.h"

namespace hadron {
namespace {

constexpr std::pair<const char*, ModelFactory> kRegistry[] = {
    {"LlamaForCausalLM", make_llama},
    {"Qwen3ForCausalLM", make_qwen3},
    {"Qwen3MoeForCausalLM", make_qwen3_moe},
    {"MixtralForCausalLM", make_mixtral},
    {"Glm4MoeForCausalLM", make_glm4_moe},
    {"GptOssForCausalLM", make_gpt_oss},
    {"DeepseekV3ForCausalLM", make_deepseek_v3},
    {"Qwen3NextForCausalLM", make_qwen3_next},
    {"Qwen3_5ForConditionalGeneration", make_qwen3_5},
    {"Qwen3_5MoeForConditionalGeneration", make_qwen3_5},
    {"DeepseekV32ForCausalLM", make_deepseek_v32},
    {"GlmMoeDsaForCausalLM", make_deepseek_v32},
};

}  // namespace

std::vector<std::string> supported_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : kRegistry) names.emplace_back(name);
  return names;
}

std::unique_ptr<Model> create_model(const ModelConfig& config, Backend& backend) {
  for (const auto& [name, factory] : kRegistry) {
    if (config.architecture != name) continue;
    std::unique_ptr<Model> model = factory(config, backend);
    // Shapes the backend cannot run are refused here, before any weight loads.
    for (const KvLayerSpec& layer : model->kv_layers()) {
      if (layer.has_index()) backend.check_sparse_attention(indexer_params_from_config(config));
      if (layer.is_latent())
        backend.check_mla(mla_params_from_config(config));
      else
        backend.check_attention(config.n_heads, layer.n_kv_heads, layer.head_dim);
    }
    if (!model->state_layers().empty())
      backend.check_linear_attention(linear_attention_params(config));
    return model;
  }
  std::string supported;
  for (const std::string& name : supported_architectures())
    supported += (supported.empty() ? "" : ", ") + name;
  input_error("{}: architecture '{}' is not implemented yet; supported: {}", config.source,
              config.architecture, supported);
}

}  // namespace hadron
