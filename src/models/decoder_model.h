// A pre-norm decoder (Llama family): embedding, N x [RMSNorm, attention, RMSNorm,
// gated MLP or mixture of experts] with residuals, final RMSNorm, LM head (optionally tied to
// the embedding). With MoE options, the layers is_sparse_layer picks use experts; with `mla`,
// every layer's attention is multi-head latent attention over a latent cache.
#pragma once

#include <optional>
#include <vector>

#include "models/attention_block.h"
#include "models/mla_attention.h"
#include "models/model.h"
#include "models/moe_block.h"

namespace hadron {

struct DecoderModelOptions {
  AttentionOptions attention;     // unless mla
  bool mla = false;               // MlaAttention (DeepSeek-V3) instead of AttentionBlock
  std::optional<MoeOptions> moe;  // for MoE configs
};

class DecoderModel : public Model {
 public:
  DecoderModel(const ModelConfig& config, Backend& backend, const DecoderModelOptions& options);

  void declare_weights(WeightPlan& plan) override;
  void prepare(int64_t max_positions) override;
  std::vector<KvLayerSpec> kv_layers() const override;
  Tensor forward(const BatchMeta& meta, const KvCache& kv, Arena& arena) override;
  void compute_logits(const Tensor& hidden, const Tensor& logits) override;

 private:
  struct Layer {
    Tensor input_norm, post_attention_norm;
    AttentionBlock attention;
    MlaAttention mla;     // options_.mla
    bool sparse = false;  // moe, else mlp
    GatedMlp mlp;
    MoeBlock moe;
  };

  DecoderModelOptions options_;
  Tensor embed_tokens_, final_norm_, lm_head_;
  std::vector<Layer> layers_;
  Buffer cos_sin_storage_;
  Tensor cos_sin_;  // F32 [max_positions, rotary_dim]
};

}  // namespace hadron
