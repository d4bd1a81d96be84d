// A pre-norm decoder (Llama family): embedding, N x [RMSNorm, attention, RMSNorm,
// gated MLP or mixture of experts] with residuals, final RMSNorm, LM head (optionally tied to
// the embedding). With MoE options, the layers is_sparse_layer picks use experts; with `mla`,
// every layer's attention is multi-head latent attention over a latent cache. Hybrid
// models (the Qwen3-Next family) mix gated DeltaNet layers with gated attention layers.
// Tensor parallelism (not for MLA or hybrids yet): the blocks declare their shards and each
// row-parallel output is all-reduced here, before the residual add.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/attention_block.h"
#include "models/gated_attention.h"
#include "models/gated_deltanet.h"
#include "models/mla_attention.h"
#include "models/model.h"
#include "models/moe_block.h"

namespace hadron {

struct DecoderModelOptions {
  AttentionOptions attention;     // unless mla
  bool mla = false;               // MlaAttention (DeepSeek-V3) instead of AttentionBlock
  std::optional<MoeOptions> moe;  // for MoE configs
  // The Qwen3-Next family: layers layer_types marks linear_attention are GatedDeltaNet (with
  // these projections), the others GatedAttentionBlock, and every RMSNorm scales by (1 + w).
  std::optional<DeltaNetProjections> hybrid;
  std::string prefix = "model.";     // the text model's weights (Qwen3.5: model.language_model.)
  std::vector<std::string> ignored;  // checkpoint prefixes it does not use (vision tower, MTP)
};

class DecoderModel : public Model {
 public:
  DecoderModel(const ModelConfig& config, Backend& backend, const DecoderModelOptions& options);

  void set_tensor_parallel(const TensorParallel& tp) override;
  void declare_weights(WeightPlan& plan) override;
  void prepare(int64_t max_positions) override;
  std::vector<KvLayerSpec> kv_layers() const override;
  std::vector<LinearStateSpec> state_layers() const override;
  Tensor forward(const BatchMeta& meta, const KvCache& kv, Arena& arena) override;
  void compute_logits(const Tensor& hidden, const Tensor& logits) override;

 private:
  struct Layer {
    LayerKind kind = LayerKind::kFullAttention;
    int cache_idx = 0;  // its KV cache, or for linear attention its state tensors, in KvCache
    Tensor input_norm, post_attention_norm;
    AttentionBlock attention;
    MlaAttention mla;                     // options_.mla
    GatedAttentionBlock gated_attention;  // hybrid models' attention
    GatedDeltaNet linear;
    bool sparse = false;  // moe, else mlp
    GatedMlp mlp;
    MoeBlock moe;
  };

  // The token mixer: attention or linear attention, into out [T, hidden].
  void mix(const Layer& layer, const AddRmsNorm& input, const BatchMeta& meta, const KvCache& kv,
           Arena& arena, const Tensor& out);
  // Hybrid models' norms scale by (1 + w): widened to F32 once loaded.
  void offset_norms();
  // Under tensor parallelism: sums a row-parallel block's partial output over the ranks.
  void all_reduce(const Tensor& x) const;

  DecoderModelOptions options_;
  std::vector<Buffer> norm_storage_;
  Tensor embed_tokens_, final_norm_, lm_head_;
  std::vector<Layer> layers_;
  Buffer cos_sin_storage_;
  Tensor cos_sin_;  // F32 [max_positions, rotary_dim]
  // Tensor parallel: a replicated embedding, and the LM head split over the vocabulary when
  // the ranks divide it (each rank's logits gathered), else replicated.
  TensorParallel tp_;
  int64_t n_local_kv_heads_ = 0;
  bool vocab_parallel_ = false;
  Buffer logits_storage_;  // vocab-parallel: this rank's logits and the gathered ones
};

}  // namespace hadron
