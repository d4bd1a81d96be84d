// Qwen3MoeForCausalLM: Qwen3 attention (q/k RMSNorm) with softmax top-k routed experts;
// norm_topk_prob, decoder_sparse_step and mlp_only_layers (dense layers) come from the config.
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_qwen3_moe(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options;
  options.attention.qkv_bias = config.attention_bias;
  options.attention.qk_norm = true;
  options.moe.emplace();
  options.moe->routing = moe_routing_from_config(config, MoeScoring::kSoftmax);
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
