// Qwen3ForCausalLM: the dense decoder with per-head q/k RMSNorm before RoPE; head_dim is
// decoupled from hidden / heads; small variants tie the LM head to the embedding.
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_qwen3(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options;
  options.attention.qkv_bias = config.attention_bias;
  options.attention.qk_norm = true;
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
