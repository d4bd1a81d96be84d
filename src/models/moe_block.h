// Mixture-of-experts feed-forward with options: a router (optionally biased, optionally with a
// selection-only score correction), routed experts stacked per layer, optional shared experts
// added to the routed sum. Routing and expert maths are Backend ops (ops/moe.h).
#pragma once

#include <string>

#include "core/arena.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "models/attention_block.h"
#include "ops/backend.h"

namespace hadron {

// Checkpoint names below the block's prefix ("model.layers.N.<block>.").
struct MoeNames {
  std::string block = "mlp";    // Mixtral: block_sparse_moe
  std::string router = "gate";  // <router>.weight [E, H]; gpt-oss: router
  std::string experts = "experts";
  // Per-expert checkpoints: <experts>.<e>.<gate|up|down>.weight. Mixtral: w1, w3, w2.
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
  std::string shared_experts = "shared_experts";  // Qwen3-Next: shared_expert
};

enum class MoeExpertLayout : uint8_t {
  kPerExpert,  // <experts>.<e>.{gate,up,down}.weight, stacked at load
  // gpt-oss: <experts>.{gate_up,down}_proj_{blocks,scales} in MXFP4 ([E, out, in/32, 16] and
  // [E, out, in/32]) with <experts>.{gate_up,down}_proj_bias; the expert op reads them packed
  kFusedMxfp4,
  // gpt-oss unquantized, as transformers saves it: <experts>.gate_up_proj [E, H, 2I] and
  // <experts>.down_proj [E, I, H] (in, out), transposed at load, with the same biases
  kFusedTransposed
};

struct MoeOptions {
  MoeRoutingParams routing;
  MoeExpertParams experts;
  MoeNames names;
  MoeExpertLayout layout = MoeExpertLayout::kPerExpert;
  bool router_bias = false;      // <router>.bias [E] (gpt-oss)
  bool correction_bias = false;  // <router>.e_score_correction_bias [E] (GLM-4.5)
  bool shared_experts = false;   // <shared_experts>.{gate,up,down}_proj (GLM-4.5)
  // The shared experts' output times sigmoid(x @ shared_expert_gate.weight^T) (Qwen3-Next)
  bool shared_expert_gate = false;
};

// Routing parameters as the config gives them (top-k, norm_topk_prob, groups, scaling).
MoeRoutingParams moe_routing_from_config(const ModelConfig& config, MoeScoring scoring);

// DeepSeek-style experts (GLM-4.5, DeepSeek-V3): sigmoid routing with a selection-only
// e_score_correction_bias, the config's groups and scaling, shared experts when it has them.
MoeOptions sigmoid_corrected_moe_options(const ModelConfig& config);

// Whether layer `layer_idx` uses experts: MoE configs with decoder_sparse_step,
// mlp_only_layers and first_k_dense_replace as transformers reads them.
bool is_sparse_layer(const ModelConfig& config, int64_t layer_idx);

class MoeBlock {
 public:
  // prefix: e.g. "model.layers.3."; the block's own name comes from options.names.block.
  void declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config,
               const MoeOptions& options);
  // Once the weights are loaded: widens the router bias to F32.
  void prepare(Backend& backend);
  // x: normed input [T, hidden]; out: [T, hidden].
  void forward(Backend& backend, const Tensor& x, Arena& arena, const Tensor& out) const;

 private:
  void declare_per_expert(WeightPlan& plan, const std::string& block);
  void declare_fused_transposed(WeightPlan& plan, const std::string& block);
  void declare_fused_mxfp4(WeightPlan& plan, const std::string& block);
  MoeExpertWeights expert_weights() const;
  int64_t local_inter() const { return inter_ / inter_slice_.n_parts; }  // this rank's part

  MoeOptions options_;
  int64_t n_experts_ = 0, hidden_ = 0, inter_ = 0;
  ShardSlice inter_slice_;  // of each expert's intermediate dim, under tensor parallelism
  int64_t first_expert_ = 0, n_local_experts_ = 0;               // this rank's experts
  Tensor router_, router_bias_, correction_bias_, shared_gate_;  // shared_gate_: [1, H]
  Tensor gate_up_, gate_up_bias_, down_, down_bias_;  // [E * 2I, H], [E, 2I], [E * H, I], [E, H]
  Tensor gate_up_scales_, down_scales_;  // kFusedMxfp4; gate_up_ and down_ hold the blocks
  Buffer router_bias_f32_;  // router_bias_ widened to F32 (the router's logits are F32)
  GatedMlp shared_;
};

}  // namespace hadron
