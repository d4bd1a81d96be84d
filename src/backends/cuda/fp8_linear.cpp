// CudaBackend's FP8 linear ops: validation, then fp8_linear.cu's plain kernels.
#include <algorithm>

#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/fp8_kernels.h"

namespace hadron::cuda {
namespace {

int64_t fp8_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void CudaBackend::quantize_fp8_per_token_group(const Tensor& x, bool ue8m0,
                                               const Fp8Activations& out) {
  const int64_t t_count = x.size(0), k = x.size(-1), group = out.group;
  HADRON_CHECK((x.dtype == DType::BF16 || x.dtype == DType::F32) && x.is_contiguous() &&
                   out.q.dtype == DType::F8_E4M3 && out.q.is_contiguous() &&
                   out.q.size(0) == t_count && out.q.size(-1) == k && group > 0 &&
                   out.scales.dtype == DType::F32 && out.scales.ndim == 2 &&
                   out.scales.size(0) == t_count && out.scales.size(1) == fp8_ceil_div(k, group),
               "quantize_fp8_per_token_group {} into {} and scales {} (group {})", x.describe(),
               out.q.describe(), out.scales.describe(), group);
  if (t_count == 0) return;
  launch_quantize_fp8(x.data, x.dtype == DType::BF16, t_count, k, group, ue8m0,
                      out.q.ptr<uint8_t>(), out.scales.ptr<float>(), out.scales.strides[0],
                      out.scales.strides[1], stream_);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::fp8_linear(const Fp8Activations& x, const Fp8Weight& w, const Tensor& bias,
                             const Tensor& out) {
  const int64_t t_count = x.q.size(0), k = x.q.size(1), n = w.q.size(0);
  HADRON_CHECK(x.q.dtype == DType::F8_E4M3 && x.q.ndim == 2 && x.q.is_contiguous() &&
                   w.q.dtype == DType::F8_E4M3 && w.q.ndim == 2 && w.q.size(1) == k &&
                   w.q.is_contiguous() && (out.dtype == DType::BF16 || out.dtype == DType::F32) &&
                   out.is_contiguous() && out.size(0) == t_count && out.size(-1) == n,
               "fp8_linear {} x {}^T into {}", x.q.describe(), w.q.describe(), out.describe());
  HADRON_CHECK(w.block_n > 0 && w.block_k > 0 && w.scales.dtype == DType::F32 &&
                   w.scales.is_contiguous() && w.scales.ndim == 2 &&
                   w.scales.size(0) == fp8_ceil_div(n, w.block_n) &&
                   w.scales.size(1) == fp8_ceil_div(k, w.block_k) && x.group > 0 &&
                   x.scales.dtype == DType::F32 && x.scales.ndim == 2 &&
                   x.scales.size(0) == t_count && x.scales.size(1) == fp8_ceil_div(k, x.group),
               "fp8_linear: scales {} (blocks {} x {}) and {} (group {})", w.scales.describe(),
               w.block_n, w.block_k, x.scales.describe(), x.group);
  const int64_t shorter = std::min(x.group, w.block_k), longer = std::max(x.group, w.block_k);
  HADRON_CHECK(longer % shorter == 0 || longer >= k,
               "fp8_linear: activation group {} and weight block_k {} do not nest", x.group,
               w.block_k);
  HADRON_CHECK(!bias.defined() ||
                   (bias.numel() == n && (bias.dtype == DType::BF16 || bias.dtype == DType::F32)),
               "fp8_linear: bias {} for {} outputs", bias.describe(), n);
  if (t_count == 0 || n == 0) return;
  const Fp8LinearArgs args{x.q.ptr<uint8_t>(),
                           w.q.ptr<uint8_t>(),
                           x.scales.ptr<float>(),
                           w.scales.ptr<float>(),
                           x.scales.strides[0],
                           x.scales.strides[1],
                           bias.defined() ? bias.data : nullptr,
                           bias.dtype == DType::BF16,
                           out.data,
                           out.dtype == DType::BF16,
                           t_count,
                           n,
                           k,
                           x.group,
                           w.block_n,
                           w.block_k,
                           std::min({x.group, w.block_k, k})};
  launch_fp8_linear(args, stream_);
  CUDA_CHECK_LAUNCH();
}

}  // namespace hadron::cuda
