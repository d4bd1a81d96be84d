// Backend's defaults for DeepSeek sparse attention (the lightning indexer): refuse, naming the
// backend. Backends that run it override all four (the CPU reference does; CUDA kernels are
// still to come).
#include "core/error.h"
#include "ops/backend.h"

namespace hadron {

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

}  // namespace hadron
