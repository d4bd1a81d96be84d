#include "models/moe_block.h"

#include <algorithm>

#include "core/error.h"
#include "models/weight_prep.h"

namespace hadron {

MoeRoutingParams moe_routing_from_config(const ModelConfig& config, MoeScoring scoring) {
  MoeRoutingParams routing;
  routing.scoring = scoring;
  routing.top_k = config.moe.n_experts_per_token;
  routing.normalize = config.moe.norm_topk_prob;
  routing.n_group = config.moe.n_group;
  routing.topk_group = config.moe.topk_group;
  routing.scaling = static_cast<float>(config.moe.routed_scaling_factor);
  return routing;
}

MoeOptions sigmoid_corrected_moe_options(const ModelConfig& config) {
  MoeOptions options;
  options.routing = moe_routing_from_config(config, MoeScoring::kSigmoid);
  options.correction_bias = true;
  options.shared_experts = config.moe.n_shared_experts > 0;
  return options;
}

bool is_sparse_layer(const ModelConfig& config, int64_t layer_idx) {
  const MoeConfig& moe = config.moe;
  if (!config.is_moe() || layer_idx < moe.first_k_dense_replace) return false;
  if (std::ranges::find(moe.mlp_only_layers, layer_idx) != moe.mlp_only_layers.end()) return false;
  return (layer_idx + 1) % moe.decoder_sparse_step == 0;
}

void MoeBlock::declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config,
                       const MoeOptions& options) {
  options_ = options;
  n_experts_ = config.moe.n_experts;
  hidden_ = config.hidden_size;
  inter_ = config.moe.expert_intermediate_size;
  // Tensor parallel: every rank routes all tokens, and holds its part of every expert's
  // intermediate dim or, with expert parallelism, its experts whole; either way the output is a
  // partial sum over ranks.
  if (plan.world() > 1 && options.layout != MoeExpertLayout::kPerExpert)
    input_error("tensor parallelism does not shard fused expert tensors ({}) yet", config.source);
  if (plan.expert_parallel()) {  // whole experts on ranks, as evenly as the experts divide
    if (n_experts_ % plan.world() != 0)
      input_error(
          "--tensor-parallel-size {} does not divide num_experts ({}) for expert parallelism",
          plan.world(), n_experts_);
    n_local_experts_ = n_experts_ / plan.world();
    first_expert_ = plan.rank() * n_local_experts_;
  } else {
    inter_slice_ = plan.slice(Shard::kColumn, inter_, "moe_intermediate_size");
    n_local_experts_ = n_experts_;
  }
  const MoeNames& names = options.names;
  const std::string block = prefix + names.block + ".";
  plan.add(&router_, block + names.router + ".weight", {n_experts_, hidden_});
  if (options.router_bias) plan.add(&router_bias_, block + names.router + ".bias", {n_experts_});
  if (options.correction_bias)
    plan.add(&correction_bias_, block + names.router + ".e_score_correction_bias", {n_experts_});
  switch (options.layout) {
    case MoeExpertLayout::kPerExpert:
      declare_per_expert(plan, block);
      break;
    case MoeExpertLayout::kFusedMxfp4:
      declare_fused_mxfp4(plan, block);
      break;
    case MoeExpertLayout::kFusedTransposed:
      declare_fused_transposed(plan, block);
      break;
  }
  if (options.shared_experts)
    shared_.declare(plan, block + names.shared_experts + ".", hidden_,
                    config.moe.shared_expert_intermediate_size);
  if (options.shared_expert_gate)
    plan.add(&shared_gate_, block + "shared_expert_gate.weight", {1, hidden_});
}

void MoeBlock::declare_per_expert(WeightPlan& plan, const std::string& block) {
  const MoeNames& names = options_.names;
  std::vector<WeightSource> gate_up, down;
  for (int64_t e = 0; e < n_experts_; ++e) {
    const std::string expert = fmt::format("{}{}.{}.", block, names.experts, e);
    if (e < first_expert_ || e >= first_expert_ + n_local_experts_) {  // another rank's
      plan.allow_unused(expert);
      continue;
    }
    gate_up.push_back({expert + names.gate + ".weight", {inter_, hidden_}, inter_slice_});
    gate_up.push_back({expert + names.up + ".weight", {inter_, hidden_}, inter_slice_});
    down.push_back({expert + names.down + ".weight",
                    {hidden_, inter_},
                    {-1, inter_slice_.n_parts, inter_slice_.part}});
  }
  plan.add_merged(&gate_up_, std::move(gate_up));
  plan.add_merged(&down_, std::move(down));
}

void MoeBlock::declare_fused_transposed(WeightPlan& plan, const std::string& block) {
  const std::string experts = block + options_.names.experts + ".";
  const int64_t E = n_experts_, H = hidden_, I = inter_;
  plan.add_transposed(&gate_up_, experts + "gate_up_proj", {E, H, 2 * I});
  plan.add(&gate_up_bias_, experts + "gate_up_proj_bias", {E, 2 * I});
  plan.add_transposed(&down_, experts + "down_proj", {E, I, H});
  plan.add(&down_bias_, experts + "down_proj_bias", {E, H});
}

void MoeBlock::declare_fused_mxfp4(WeightPlan& plan, const std::string& block) {
  if (hidden_ % 32 != 0 || inter_ % 32 != 0)
    input_error("MXFP4 experts need hidden ({}) and intermediate ({}) sizes divisible by 32",
                hidden_, inter_);
  const std::string experts = block + options_.names.experts + ".";
  const int64_t E = n_experts_, H = hidden_, I = inter_;
  plan.add_raw(&gate_up_, experts + "gate_up_proj_blocks", {E, 2 * I, H / 32, 16});
  plan.add_raw(&gate_up_scales_, experts + "gate_up_proj_scales", {E, 2 * I, H / 32});
  plan.add(&gate_up_bias_, experts + "gate_up_proj_bias", {E, 2 * I});
  plan.add_raw(&down_, experts + "down_proj_blocks", {E, H, I / 32, 16});
  plan.add_raw(&down_scales_, experts + "down_proj_scales", {E, H, I / 32});
  plan.add(&down_bias_, experts + "down_proj_bias", {E, H});
}

void MoeBlock::prepare(Backend& backend) {
  // The router writes F32 logits and backends take a bias in the output's dtype.
  if (router_bias_.defined() && router_bias_.dtype != DType::F32)
    router_bias_ = widen_to_f32(backend, router_bias_, 0.0f, router_bias_f32_);
}

void MoeBlock::forward(Backend& backend, const Tensor& x, Arena& arena, const Tensor& out) const {
  const int64_t n_tokens = x.size(0), k = options_.routing.top_k;
  const Tensor logits = arena.alloc(DType::F32, {n_tokens, n_experts_});
  const Tensor ids = arena.alloc(DType::I32, {n_tokens, k});
  const Tensor weights = arena.alloc(DType::F32, {n_tokens, k});
  backend.moe_router(x, router_, router_bias_, correction_bias_, options_.routing, logits, ids,
                     weights);
  MoeExpertParams params = options_.experts;
  params.first_expert = first_expert_;
  params.n_total_experts = n_experts_;
  if (options_.shared_expert_gate) {
    const Tensor shared = arena.alloc(x.dtype, {n_tokens, hidden_});
    shared_.forward(backend, x, arena, shared);
    const Tensor gate = arena.alloc(x.dtype, {n_tokens, 1});
    backend.linear(x, shared_gate_, Tensor{}, gate);
    backend.sigmoid_mul(shared, gate, out);
    params.accumulate = true;
  } else if (options_.shared_experts) {
    shared_.forward(backend, x, arena, out);
    params.accumulate = true;
  }
  const MoeExpertWeights experts = expert_weights();
  const size_t workspace_bytes =
      backend.moe_workspace_bytes(n_tokens, k, n_local_experts_, hidden_, local_inter());
  const Tensor workspace = workspace_bytes > 0
                               ? arena.alloc(DType::U8, {static_cast<int64_t>(workspace_bytes)})
                               : Tensor{};
  backend.moe_experts(x, ids, weights, experts, params, workspace, out);
}

MoeExpertWeights MoeBlock::expert_weights() const {
  const int64_t E = n_local_experts_, H = hidden_, I = local_inter();
  switch (options_.layout) {
    case MoeExpertLayout::kPerExpert:
    case MoeExpertLayout::kFusedTransposed:
      return {gate_up_.reshape({E, 2 * I, H}), gate_up_bias_, down_.reshape({E, H, I}), down_bias_};
    case MoeExpertLayout::kFusedMxfp4:
      return {gate_up_.reshape({E, 2 * I, H / 2}),
              gate_up_bias_,
              down_.reshape({E, H, I / 2}),
              down_bias_,
              gate_up_scales_,
              down_scales_};
  }
  return {};
}

}  // namespace hadron
