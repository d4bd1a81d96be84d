// LlamaForCausalLM: the dense decoder with optional attention biases (Llama 2/3.x, and
// Mistral-style checkpoints that use the same names).
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_llama(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options;
  options.attention.qkv_bias = config.attention_bias;
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
