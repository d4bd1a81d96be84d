// DeepseekV3ForCausalLM (DeepSeek-V3, R1, V3.1; Kimi-K2; Moonlight): multi-head latent
// attention (q with or without a LoRA rank, decoupled rope, DeepSeek's YaRN softmax scale);
// sigmoid routing with a selection-only score correction, group-limited top-k and
// routed_scaling_factor; shared experts; dense layers before first_k_dense_replace.
// Multi-token-prediction layers in the checkpoint are skipped.
#include "core/error.h"
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_deepseek_v3(const ModelConfig& config, Backend& backend) {
  if (!config.is_mla())
    input_error("{}: DeepseekV3ForCausalLM needs kv_lora_rank (multi-head latent attention)",
                config.source);
  DecoderModelOptions options;
  options.mla = true;
  options.moe = sigmoid_corrected_moe_options(config);
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
