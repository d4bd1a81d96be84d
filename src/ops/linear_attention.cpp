// Backend's defaults for the gated DeltaNet ops: a backend that runs them overrides
// check_linear_attention and every op; the others refuse such models when they are made.
#include "core/error.h"
#include "ops/backend.h"

namespace hadron {
namespace {

[[noreturn]] void unsupported(const Backend& backend, const char* op) {
  fail_check("implemented",
             fmt::format("the {} backend has no {} (check_linear_attention "
                         "refuses such models)",
                         backend.name(), op),
             SourceLocation::current());
}

}  // namespace

void Backend::check_linear_attention(const LinearAttentionParams& params) const {
  input_error(
      "the {} backend does not run linear-attention (gated DeltaNet) layers yet ({} key heads, "
      "{} value heads); run this model with --device cpu",
      name(), params.n_key_heads, params.n_value_heads);
}

void Backend::causal_conv1d(const Tensor&, const Tensor&, const Tensor&, const BatchMeta&,
                            const Tensor&) {
  unsupported(*this, "causal_conv1d");
}

void Backend::gated_delta_rule(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, const BatchMeta&, const LinearAttentionParams&,
                               const Tensor&) {
  unsupported(*this, "gated_delta_rule");
}

void Backend::rms_norm_gated(const Tensor&, const Tensor&, const Tensor&, float, const Tensor&) {
  unsupported(*this, "rms_norm_gated");
}

void Backend::sigmoid_mul(const Tensor&, const Tensor&, const Tensor&) {
  unsupported(*this, "sigmoid_mul");
}

}  // namespace hadron
