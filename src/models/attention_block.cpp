#include "models/attention_block.h"

#include <cmath>

#include "models/projection.h"

namespace hadron {

void AttentionBlock::declare(WeightPlan& plan, const std::string& prefix, const ModelConfig& config,
                             const AttentionOptions& options) {
  options_ = options;
  const int64_t hidden = config.hidden_size, d = config.head_dim;
  const int64_t nq = config.n_heads, nkv = config.n_kv_heads;
  // Tensor parallel: each rank holds whole heads (q split, KV split or replicated when there
  // are fewer than ranks); o_proj is row-parallel, its output a partial sum over ranks.
  const ShardSlice q = plan.slice(Shard::kColumn, nq, "num_attention_heads");
  const ShardSlice kv = plan.slice(Shard::kColumn, nkv, "num_key_value_heads", true);
  const ShardSlice o = plan.slice(Shard::kRow, nq, "num_attention_heads");
  adds_o_bias_ = plan.rank() == 0;  // added once to the sum
  qkv_params_ = {nq / q.n_parts, nkv / kv.n_parts, d, static_cast<float>(config.rms_norm_eps),
                 options.rope_style};
  plan.add_merged(&qkv_, {{prefix + "q_proj.weight", {nq * d, hidden}, q},
                          {prefix + "k_proj.weight", {nkv * d, hidden}, kv},
                          {prefix + "v_proj.weight", {nkv * d, hidden}, kv}});
  if (options.qkv_bias)
    plan.add_merged(&qkv_bias_, {{prefix + "q_proj.bias", {nq * d}, q},
                                 {prefix + "k_proj.bias", {nkv * d}, kv},
                                 {prefix + "v_proj.bias", {nkv * d}, kv}});
  if (options.qk_norm) {
    plan.add(&q_norm_, prefix + "q_norm.weight", {d});
    plan.add(&k_norm_, prefix + "k_norm.weight", {d});
  }
  plan.add(&o_proj_, prefix + "o_proj.weight", {hidden, nq * d}, o);
  plan.allow_fp8(&qkv_, &qkv_fp8_);
  plan.allow_fp8(&o_proj_, &o_fp8_);
  if (options.o_bias) plan.add(&o_bias_, prefix + "o_proj.bias", {hidden});
  if (options.sinks) plan.add(&sinks_, prefix + "sinks", {nq}, q);
}

void AttentionBlock::forward(Backend& backend, const AddRmsNorm& input, const BatchMeta& meta,
                             const Tensor& k_cache, const Tensor& v_cache, const Tensor& cos_sin,
                             Arena& arena, const Tensor& out) const {
  const int64_t n_tokens = input.residual.size(0), nq = qkv_params_.n_heads;
  const int64_t d = qkv_params_.head_dim;
  const DType act = backend.activation_dtype();
  const Tensor qkv = arena.alloc(act, {n_tokens, qkv_.size(0)});
  const Tensor q = arena.alloc(act, {n_tokens, nq, d});
  if (qkv_fp8_.defined()) {  // no fused FP8 path yet: norm, product, then the cache writes
    apply_add_rms_norm(backend, input);
    project(backend, input.normed, qkv_, qkv_fp8_, qkv_bias_, arena, qkv);
    backend.qkv_rope_store(qkv, q_norm_, k_norm_, meta.positions, cos_sin, qkv_params_, k_cache,
                           v_cache, meta.slot_mapping, q);
  } else {
    backend.qkv_projection(input, qkv_, qkv_bias_, qkv, q_norm_, k_norm_, meta.positions, cos_sin,
                           qkv_params_, k_cache, v_cache, meta.slot_mapping, q);
  }
  const Tensor attn = arena.alloc(act, {n_tokens, nq, d});
  const AttentionParams params{1.0f / std::sqrt(static_cast<float>(d)), options_.sliding_window,
                               0.0f, sinks_};
  backend.attention(q, k_cache, v_cache, meta, params, attn);
  project(backend, attn.reshape({n_tokens, nq * d}), o_proj_, o_fp8_,
          adds_o_bias_ ? o_bias_ : Tensor{}, arena, out);
}

void GatedMlp::declare(WeightPlan& plan, const std::string& prefix, int64_t hidden,
                       int64_t intermediate) {
  // Tensor parallel: gate/up column-parallel, down row-parallel (a partial sum over ranks).
  const ShardSlice column =
      plan.slice(Shard::kColumn, intermediate, "the intermediate size of " + prefix + "*");
  const ShardSlice row =
      plan.slice(Shard::kRow, intermediate, "the intermediate size of " + prefix + "*");
  intermediate_ = intermediate / column.n_parts;
  plan.add_merged(&gate_up_, {{prefix + "gate_proj.weight", {intermediate, hidden}, column},
                              {prefix + "up_proj.weight", {intermediate, hidden}, column}});
  plan.add(&down_, prefix + "down_proj.weight", {hidden, intermediate}, row);
  plan.allow_fp8(&gate_up_, &gate_up_fp8_);
  plan.allow_fp8(&down_, &down_fp8_);
}

void GatedMlp::forward(Backend& backend, const Tensor& x, Arena& arena, const Tensor& out) const {
  const Tensor gate_up = arena.alloc(backend.activation_dtype(), {x.size(0), 2 * intermediate_});
  project(backend, x, gate_up_, gate_up_fp8_, Tensor{}, arena, gate_up);
  down(backend, gate_up, arena, out);
}

void GatedMlp::forward(Backend& backend, const AddRmsNorm& input, Arena& arena,
                       const Tensor& out) const {
  const int64_t n_tokens = input.residual.size(0);
  const DType act = backend.activation_dtype();
  const Tensor gate_up = arena.alloc(act, {n_tokens, 2 * intermediate_});
  const Tensor activated = arena.alloc(act, {n_tokens, intermediate_});
  if (gate_up_fp8_.defined()) {
    apply_add_rms_norm(backend, input);
    project(backend, input.normed, gate_up_, gate_up_fp8_, Tensor{}, arena, gate_up);
    backend.silu_mul(gate_up, activated);
  } else {
    backend.add_rms_norm_linear_silu(input, gate_up_, gate_up, activated);
  }
  project(backend, activated, down_, down_fp8_, Tensor{}, arena, out);
}

void GatedMlp::down(Backend& backend, const Tensor& gate_up, Arena& arena,
                    const Tensor& out) const {
  const Tensor activated =
      arena.alloc(backend.activation_dtype(), {gate_up.size(0), intermediate_});
  if (!down_fp8_.defined())
    return backend.silu_mul_linear(gate_up, activated, down_, Tensor{}, out);
  backend.silu_mul(gate_up, activated);
  project(backend, activated, down_, down_fp8_, Tensor{}, arena, out);
}

}  // namespace hadron
