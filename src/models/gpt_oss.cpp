// GptOssForCausalLM: attention with q/k/v/o biases and a learned sink logit per head,
// sliding-window attention on the layers layer_types marks (alternate layers), YaRN rope;
// a biased router whose softmax over the top-k logits equals the renormalised top-k of a full
// softmax; experts stored fused and MXFP4-quantised (read packed by the expert op) with
// biases and a clamped SwiGLU over interleaved gate/up rows; or, in unquantized checkpoints
// (no MXFP4 quantization_config), fused in transformers' (in, out) layout.
#include "models/decoder_model.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_gpt_oss(const ModelConfig& config, Backend& backend) {
  DecoderModelOptions options;
  options.attention.qkv_bias = config.attention_bias;
  options.attention.o_bias = config.attention_bias;
  options.attention.sinks = true;
  options.moe.emplace();
  options.moe->routing = moe_routing_from_config(config, MoeScoring::kSoftmax);
  options.moe->routing.normalize = true;
  options.moe->names.router = "router";
  options.moe->router_bias = true;
  options.moe->layout = config.quant.method == "mxfp4" ? MoeExpertLayout::kFusedMxfp4
                                                       : MoeExpertLayout::kFusedTransposed;
  options.moe->experts.activation = MoeActivation::kClampedSwiGluInterleaved;
  options.moe->experts.swiglu_limit = config.raw.value("swiglu_limit", 7.0f);
  options.moe->experts.swiglu_alpha = 1.702f;  // fixed in the reference implementation
  return std::make_unique<DecoderModel>(config, backend, options);
}

}  // namespace hadron
