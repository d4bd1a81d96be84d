#include "models/gated_deltanet.h"

#include "models/weight_prep.h"

namespace hadron {

LinearAttentionParams linear_attention_params(const ModelConfig& config) {
  const LinearAttentionConfig& linear = config.linear_attention;
  return {linear.n_key_heads, linear.n_value_heads, linear.key_head_dim, linear.value_head_dim,
          linear.conv_kernel_dim};
}

LinearStateSpec linear_state_spec(const ModelConfig& config) {
  const LinearAttentionParams p = linear_attention_params(config);
  return {p.conv_dim(),   p.conv_kernel - 1, p.n_value_heads,
          p.key_head_dim, p.value_head_dim,  config.linear_attention.state_dtype};
}

void GatedDeltaNet::declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config,
                            DeltaNetProjections projections) {
  projections_ = projections;
  params_ = linear_attention_params(config);
  eps_ = static_cast<float>(config.rms_norm_eps);
  const int64_t hidden = config.hidden_size, hv = params_.n_value_heads;
  const int64_t conv_dim = params_.conv_dim(), value_dim = params_.value_dim();
  switch (projections) {
    case DeltaNetProjections::kGroupedPerKeyHead:
      plan.add_merged(&in_proj_, {{prefix + "in_proj_qkvz.weight", {conv_dim + value_dim, hidden}},
                                  {prefix + "in_proj_ba.weight", {2 * hv, hidden}}});
      break;
    case DeltaNetProjections::kSeparate:
      plan.add_merged(&in_proj_, {{prefix + "in_proj_qkv.weight", {conv_dim, hidden}},
                                  {prefix + "in_proj_z.weight", {value_dim, hidden}},
                                  {prefix + "in_proj_b.weight", {hv, hidden}},
                                  {prefix + "in_proj_a.weight", {hv, hidden}}});
      break;
  }
  plan.add(&conv_, prefix + "conv1d.weight", {conv_dim, 1, params_.conv_kernel});
  plan.add(&a_log_, prefix + "A_log", {hv});
  plan.add(&dt_bias_, prefix + "dt_bias", {hv});
  plan.add(&norm_, prefix + "norm.weight", {params_.value_head_dim});
  plan.add(&out_proj_, prefix + "out_proj.weight", {hidden, value_dim});
}

void GatedDeltaNet::prepare(Backend& backend) {
  // The decay exp(-exp(A_log) softplus(a + dt_bias)) amplifies their rounding: kept in f32, as
  // checkpoints store A_log.
  a_log_ = widen_to_f32(backend, a_log_, 0.0f, a_log_f32_);
  dt_bias_ = widen_to_f32(backend, dt_bias_, 0.0f, dt_bias_f32_);
  if (projections_ != DeltaNetProjections::kGroupedPerKeyHead) return;
  // Per key head g: [q (Dk) | k (Dk) | v (r Dv) | z (r Dv)] in in_proj_qkvz, then [b (r) | a (r)]
  // in in_proj_ba, where r = Hv / Hk value heads share key head g.
  const int64_t hk = params_.n_key_heads, dk = params_.key_head_dim;
  const int64_t r = params_.n_value_heads / hk, rv = r * params_.value_head_dim;
  const int64_t group = 2 * dk + 2 * rv, ba_start = hk * group;
  const int64_t qkvz_offsets[] = {0, dk, 2 * dk, 2 * dk + rv}, qkvz_sizes[] = {dk, dk, rv, rv};
  std::vector<int64_t> order;
  for (int part = 0; part < 4; ++part)
    for (int64_t g = 0; g < hk; ++g)
      append_rows(order, g * group + qkvz_offsets[part], qkvz_sizes[part]);
  for (int part = 0; part < 2; ++part)
    for (int64_t g = 0; g < hk; ++g) append_rows(order, ba_start + g * 2 * r + part * r, r);
  permute_rows(backend, in_proj_, order);
}

void GatedDeltaNet::forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
                            const Tensor& conv_state, const Tensor& recurrent_state, Arena& arena,
                            const Tensor& out) const {
  const int64_t n_tokens = input.residual.size(0), hv = params_.n_value_heads;
  const int64_t dv = params_.value_head_dim, conv_dim = params_.conv_dim();
  const int64_t value_dim = params_.value_dim();
  const DType act = backend.activation_dtype();
  const Tensor qkv = arena.alloc(act, {n_tokens, conv_dim});
  backend.add_rms_norm_linear(input, in_proj_.slice_rows(0, conv_dim), Tensor{}, qkv);
  const Tensor z = arena.alloc(act, {n_tokens, value_dim});
  backend.linear(input.normed, in_proj_.slice_rows(conv_dim, conv_dim + value_dim), Tensor{}, z);
  const Tensor ba = arena.alloc(DType::F32, {n_tokens, 2 * hv});  // gates: f32, as the decay's
  backend.linear(input.normed, in_proj_.slice_rows(conv_dim + value_dim, in_proj_.size(0)),
                 Tensor{}, ba);
  const Tensor mixed = arena.alloc(act, {n_tokens, conv_dim});
  backend.causal_conv1d(qkv, conv_.reshape({conv_dim, params_.conv_kernel}), conv_state, meta,
                        mixed);
  const Tensor core = arena.alloc(act, {n_tokens, hv, dv});
  backend.gated_delta_rule(mixed, ba, a_log_, dt_bias_, recurrent_state, meta, params_, core);
  const Tensor gated = arena.alloc(act, {n_tokens, value_dim});
  backend.rms_norm_gated(core.reshape({n_tokens * hv, dv}), z.reshape({n_tokens * hv, dv}), norm_,
                         eps_, gated.reshape({n_tokens * hv, dv}));
  backend.linear(gated, out_proj_, Tensor{}, out);
}

}  // namespace hadron
