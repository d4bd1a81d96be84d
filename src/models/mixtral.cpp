// MixtralForCausalLM: Llama-style attention with softmax top-k experts whose weights are
// always renormalised; checkpoint names block_sparse_moe.gate and experts.N.w1 (gate),
// w3 (up), w2 (down).
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_mixtral(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options;
  options.attention.qkv_bias = config.attention_bias;
  options.moe.emplace();
  options.moe->routing = moe_routing_from_config(config, MoeScoring::kSoftmax);
  options.moe->routing.normalize = true;
  options.moe->names = {.block = "block_sparse_moe", .gate = "w1", .up = "w3", .down = "w2"};
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
