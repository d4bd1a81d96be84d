// Rotary position embedding, applied in place from a precomputed cos/sin table.
#include "backends/cpu/cpu_backend.h"
#include "core/error.h"

namespace hadron {

void rope_head(float* head, const float* cos_sin_row, int64_t rotary_dim, RopeStyle style) {
  const int64_t half = rotary_dim / 2;
  const float* cos = cos_sin_row;
  const float* sin = cos_sin_row + half;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = style == RopeStyle::kNeox ? i : 2 * i;
    const int64_t b = style == RopeStyle::kNeox ? i + half : 2 * i + 1;
    const float x1 = head[a], x2 = head[b];
    head[a] = x1 * cos[i] - x2 * sin[i];
    head[b] = x2 * cos[i] + x1 * sin[i];
  }
}

void CpuBackend::rope(const Tensor& x, const Tensor& positions, const Tensor& cos_sin,
                      RopeStyle style) {
  const int64_t n_tokens = x.size(0), n_heads = x.size(1), head_dim = x.size(2);
  const int64_t rotary_dim = cos_sin.size(1);
  HADRON_CHECK(x.dtype == DType::F32 && x.ndim == 3 && positions.size(0) == n_tokens &&
                   rotary_dim <= head_dim && rotary_dim % 2 == 0 && cos_sin.dtype == DType::F32,
               "rope on {} with positions {} and table {}", x.describe(), positions.describe(),
               cos_sin.describe());
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t pos = positions.ptr<int32_t>()[t];
    HADRON_CHECK(pos >= 0 && pos < cos_sin.size(0), "position {} beyond rope table {}", pos,
                 cos_sin.size(0));
    const float* row = cos_sin.ptr<float>() + pos * rotary_dim;
    for (int64_t h = 0; h < n_heads; ++h)
      rope_head(x.ptr<float>() + (t * n_heads + h) * head_dim, row, rotary_dim, style);
  }
}

}  // namespace hadron
