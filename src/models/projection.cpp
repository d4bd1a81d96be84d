#include "models/projection.h"

namespace hadron {

void project(Backend& backend, const Tensor& x, const Tensor& weight, const Fp8Weight& fp8,
             const Tensor& bias, Arena& arena, const Tensor& out) {
  if (!fp8.defined()) return backend.linear(x, weight, bias, out);
  const int64_t n_tokens = x.size(0), k = x.size(-1);
  const size_t mark = arena.used();
  const Fp8Activations quantized{
      arena.alloc(DType::F8_E4M3, {n_tokens, k}),
      arena.alloc(DType::F32, {n_tokens, (k + fp8.act_group - 1) / fp8.act_group}), fp8.act_group};
  backend.quantize_fp8_per_token_group(x, fp8.ue8m0, quantized);
  backend.fp8_linear(quantized, fp8, bias, out);
  arena.rewind(mark);
}

}  // namespace hadron
