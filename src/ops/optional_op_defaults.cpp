// Backend's defaults for the op families only some backends run: multi-head latent attention,
// DeepSeek sparse attention, gated DeltaNet and the FP8 linear. Each family's check (for FP8:
// supports_fp8_linear) refuses its models when they are made, naming the backend; a backend
// that runs a family overrides its check and all of its ops (the CPU reference runs all four,
// CUDA runs MLA).
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

void Backend::check_mla(const MlaParams& params) const {
  input_error(
      "the {} backend does not run multi-head latent attention (MLA: {} heads, latent {}, rope "
      "{}) yet; run this model with --device cpu",
      name(), params.n_heads, params.latent_dim, params.rope_dim);
}

void Backend::mla_rope_store(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                             const Tensor&, const MlaParams& params, const Tensor&, const Tensor&) {
  check_mla(params);
}

void Backend::mla_attention(const Tensor&, const Tensor&, const Tensor&, const BatchMeta&,
                            const MlaParams& params, const Tensor&) {
  check_mla(params);
}

void Backend::check_sparse_attention(const IndexerParams& params) const {
  input_error(
      "the {} backend does not run DeepSeek sparse attention (lightning indexer: {} heads x {}, "
      "top-{}) yet; run this model with --device cpu",
      name(), params.n_heads, params.head_dim, params.top_k);
}

void Backend::indexer_rope_store(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                 const Tensor&, const Tensor&, const IndexerParams& params,
                                 const Tensor&, const Tensor&) {
  check_sparse_attention(params);
}

void Backend::indexer_select(const Tensor&, const Tensor&, const Tensor&, const BatchMeta&,
                             const IndexerParams& params, const Tensor&) {
  check_sparse_attention(params);
}

void Backend::sparse_mla_attention(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                   const BatchMeta&, const MlaParams& params, const Tensor&) {
  input_error(
      "the {} backend does not run sparse MLA attention ({} heads, latent {}) yet; run "
      "this model with --device cpu",
      name(), params.n_heads, params.latent_dim);
}

void Backend::quantize_fp8_per_token_group(const Tensor& x, bool, const Fp8Activations&) {
  input_error(
      "the {} backend has no FP8 linear yet (quantize_fp8_per_token_group of {}); load FP8 "
      "checkpoints dequantized (the default) or run with --device cpu",
      name(), x.describe());
}

void Backend::fp8_linear(const Fp8Activations&, const Fp8Weight& weight, const Tensor&,
                         const Tensor&) {
  input_error(
      "the {} backend has no FP8 linear yet (weight {}); load FP8 checkpoints dequantized (the "
      "default) or run with --device cpu",
      name(), weight.q.describe());
}

}  // namespace hadron
