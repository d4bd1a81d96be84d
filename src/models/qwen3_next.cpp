// Qwen3NextForCausalLM: three gated DeltaNet layers to one gated attention layer
// (full_attention_interval), q/k/v/z and b/a projections stored grouped per key head, partial
// RoPE, (1 + w) RMSNorms, and experts with a sigmoid-gated shared expert.
#include "models/qwen3_next.h"

#include "models/registry.h"

namespace hadron {

DecoderModelOptions qwen3_next_options(const ModelConfig& config, DeltaNetProjections projections) {
  DecoderModelOptions options;
  options.hybrid = projections;
  options.ignored = {"mtp."};
  if (config.is_moe()) {
    options.moe.emplace();
    options.moe->routing = moe_routing_from_config(config, MoeScoring::kSoftmax);
    options.moe->names.shared_experts = "shared_expert";
    options.moe->shared_experts = true;
    options.moe->shared_expert_gate = true;
  }
  return options;
}

std::unique_ptr<Model> make_qwen3_next(const ModelConfig& config, Backend& backend) {
  return std::make_unique<DecoderModel>(
      config, backend, qwen3_next_options(config, DeltaNetProjections::kGroupedPerKeyHead));
}

}  // namespace hadron
