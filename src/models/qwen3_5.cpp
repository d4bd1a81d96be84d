// Qwen3_5ForConditionalGeneration and Qwen3_5MoeForConditionalGeneration, text only: the
// Qwen3-Next layers with separate in_proj_qkv / in_proj_z / in_proj_b / in_proj_a, under
// model.language_model.; the vision tower (model.visual.) is not loaded. With text-only
// positions the interleaved multimodal RoPE is plain RoPE.
#include "models/qwen3_next.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_qwen3_5(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options = qwen3_next_options(config, DeltaNetProjections::kSeparate);
  options.prefix = "model.language_model.";
  options.ignored.push_back("model.visual.");
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
