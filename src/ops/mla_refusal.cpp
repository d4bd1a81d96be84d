// Backend's defaults for multi-head latent attention: refuse, naming the backend. Backends
// that run MLA override all three (the CPU reference does; CUDA kernels are still to come).
#include "core/error.h"
#include "ops/backend.h"

namespace hadron {

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

}  // namespace hadron
