// Glm4MoeForCausalLM (GLM-4.5): attention with q/k/v biases, optional q/k RMSNorm
// (use_qk_norm) and partial rotary (the config's partial_rotary_factor, NeoX halves);
// sigmoid routing with a selection-only score correction, grouped top-k and
// routed_scaling_factor; a shared expert; dense layers before first_k_dense_replace.
// Multi-token-prediction layers in the checkpoint are skipped.
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_glm4_moe(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options;
  options.attention.qkv_bias = config.attention_bias;
  options.attention.qk_norm = config.raw.value("use_qk_norm", false);
  options.moe = sigmoid_corrected_moe_options(config);
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
