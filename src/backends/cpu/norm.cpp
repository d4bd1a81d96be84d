// RMSNorm and fused residual-add + RMSNorm.
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
void rms_normalize(const float* x, const float* weight, int64_t width, float eps, float* out) {
  double sum_squares = 0;
  for (int64_t i = 0; i < width; ++i) sum_squares += double{x[i]} * x[i];
  const float inv_rms = 1.0f / std::sqrt(static_cast<float>(sum_squares / width) + eps);
  for (int64_t i = 0; i < width; ++i) out[i] = x[i] * inv_rms * weight[i];
}

namespace {

std::vector<float> weight_f32(const Tensor& weight) {
  std::vector<float> values(weight.numel());
  load_row_f32(weight, 0, weight.numel(), values.data());
  return values;
}

}  // namespace

void CpuBackend::rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
  const int64_t width = weight.numel();
  HADRON_CHECK(x.dtype == DType::F32 && out.dtype == DType::F32 && x.numel() == out.numel() &&
                   x.numel() % width == 0,
               "rms_norm {} with weight {} into {}", x.describe(), weight.describe(),
               out.describe());
  const std::vector<float> w = weight_f32(weight);
  const int64_t n_rows = x.numel() / width;
  for (int64_t r = 0; r < n_rows; ++r)
    rms_normalize(x.ptr<float>() + r * width, w.data(), width, eps, out.ptr<float>() + r * width);
}

void CpuBackend::add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                              float eps, const Tensor& out) {
  const int64_t width = weight.numel();
  HADRON_CHECK(x.numel() == residual.numel() && x.numel() == out.numel() &&
                   x.numel() % width == 0 && residual.dtype == DType::F32,
               "add_rms_norm {} + {} with {} into {}", x.describe(), residual.describe(),
               weight.describe(), out.describe());
  const std::vector<float> w = weight_f32(weight);
  float* res = residual.ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) res[i] += x.ptr<float>()[i];
  for (int64_t r = 0; r < x.numel() / width; ++r)
    rms_normalize(res + r * width, w.data(), width, eps, out.ptr<float>() + r * width);
}

}  // namespace hadron
