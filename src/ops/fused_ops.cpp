// Backend's defaults for the ops that exist to be fused (add_rms_norm_linear,
// add_rms_norm_linear_silu, qkv_projection, silu_mul_linear, moe_router): the ops they
// are made of, one after another. Backends override them where fusing pays.
#include "core/error.h"
#include "ops/backend.h"

namespace hadron {

void check_out_of_place(const AddRmsNorm& norm) {
  HADRON_CHECK(!norm.add.defined() ||
                   (norm.residual_out.defined() && norm.residual_out.data != norm.residual.data &&
                    norm.residual_out.data != norm.add.data),
               "add_rms_norm_linear: residual_out {} must be its own buffer",
               norm.residual_out.describe());
}

void apply_add_rms_norm(Backend& backend, const AddRmsNorm& norm) {
  check_out_of_place(norm);
  if (norm.add.defined()) {
    backend.copy(norm.residual, norm.residual_out);
    backend.add_rms_norm(norm.add, norm.residual_out, norm.weight, norm.eps, norm.normed);
  } else {
    backend.rms_norm(norm.residual, norm.weight, norm.eps, norm.normed);
  }
}

void Backend::add_rms_norm_linear(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                                  const Tensor& out) {
  apply_add_rms_norm(*this, norm);
  linear(norm.normed, weight, bias, out);
}

void Backend::add_rms_norm_linear_silu(const AddRmsNorm& norm, const Tensor& weight,
                                       const Tensor& gate_up, const Tensor& activated) {
  add_rms_norm_linear(norm, weight, Tensor{}, gate_up);
  silu_mul(gate_up, activated);
}

void Backend::qkv_projection(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                             const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                             const Tensor& positions, const Tensor& cos_sin,
                             const QkvParams& params, const Tensor& k_cache, const Tensor& v_cache,
                             const Tensor& slot_mapping, const Tensor& q_out) {
  add_rms_norm_linear(norm, weight, bias, qkv);
  qkv_rope_store(qkv, q_norm, k_norm, positions, cos_sin, params, k_cache, v_cache, slot_mapping,
                 q_out);
}

void Backend::silu_mul_linear(const Tensor& gate_up, const Tensor& activated, const Tensor& weight,
                              const Tensor& bias, const Tensor& out) {
  silu_mul(gate_up, activated);
  linear(activated, weight, bias, out);
}

void Backend::moe_router(const Tensor& x, const Tensor& router, const Tensor& router_bias,
                         const Tensor& correction_bias, const MoeRoutingParams& params,
                         const Tensor& logits, const Tensor& topk_ids, const Tensor& topk_weights) {
  linear(x, router, router_bias, logits);
  moe_route(logits, correction_bias, params, topk_ids, topk_weights);
}

}  // namespace hadron
