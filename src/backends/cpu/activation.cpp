// SiLU-and-mul for gated MLPs.
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"

namespace hadron {

void CpuBackend::silu_mul(const Tensor& gate_up, const Tensor& out) {
  const int64_t inter = out.size(-1);
  HADRON_CHECK(gate_up.size(-1) == 2 * inter && gate_up.size(0) == out.size(0),
               "silu_mul {} into {}", gate_up.describe(), out.describe());
  for (int64_t t = 0; t < out.size(0); ++t) {
    const float* gate = gate_up.ptr<float>() + t * 2 * inter;
    const float* up = gate + inter;
    float* dst = out.ptr<float>() + t * inter;
    for (int64_t i = 0; i < inter; ++i) dst[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
  }
}

}  // namespace hadron
