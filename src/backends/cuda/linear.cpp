// CudaBackend::linear: cuBLASLt, or for decode-sized inputs (m <= kGemvMaxRows) the GEMV
// kernel when it was faster on that shape. The choice is timed with events the first time a
// shape is seen (outside stream capture, so graphs replay a decided path) and cached.
#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/kernels.h"

namespace hadron::cuda {

bool CudaBackend::prefer_gemv(int64_t m, int64_t n, int64_t k, bool out_f32, const void* x,
                              const void* w, const void* bias, void* out) {
  const auto key = std::tuple{m, n, k, out_f32};
  if (auto it = gemv_choice_.find(key); it != gemv_choice_.end()) return it->second;
  cudaStreamCaptureStatus capture;
  CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
  if (capture != cudaStreamCaptureStatusNone) return false;  // undecided: cuBLASLt
  auto time_ms = [&](auto&& launch) {
    constexpr int kRepeats = 5;
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    launch();  // warm-up (plan creation, module load)
    CUDA_CHECK(cudaEventRecord(start, stream_));
    for (int i = 0; i < kRepeats; ++i) launch();
    CUDA_CHECK(cudaEventRecord(stop, stream_));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms;
  };
  const float gemv_ms =
      time_ms([&] { launch_gemv(x, w, bias, out, out_f32, m, n, k, stream_); });
  const float gemm_ms = time_ms([&] { gemm_->run(x, w, bias, out, out_f32, m, n, k); });
  return gemv_choice_[key] = gemv_ms < gemm_ms;
}

void CudaBackend::linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const Tensor& out) {
  check_tensor(x, DType::BF16, "linear x");
  check_tensor(weight, DType::BF16, "linear weight");
  HADRON_CHECK(on_gpu(out) && (out.dtype == DType::BF16 || out.dtype == DType::F32),
               "linear out must be BF16 or F32 on the GPU, got {}", out.describe());
  const int64_t m = x.numel() / x.size(-1), k = x.size(-1), n = weight.size(0);
  HADRON_CHECK(weight.ndim == 2 && weight.size(1) == k && out.numel() == m * n &&
                   out.size(-1) == n && k % 8 == 0,
               "linear {} x {}^T into {}", x.describe(), weight.describe(), out.describe());
  const bool out_f32 = out.dtype == DType::F32;
  if (bias.defined()) {
    check_tensor(bias, out.dtype, "linear bias (in out's dtype)");
    HADRON_CHECK(bias.numel() == n, "bias {} for {} outputs", bias.describe(), n);
  }
  const void* bias_ptr = bias.defined() ? bias.data : nullptr;
  if (m <= kGemvMaxRows && prefer_gemv(m, n, k, out_f32, x.data, weight.data, bias_ptr, out.data)) {
    launch_gemv(x.data, weight.data, bias_ptr, out.data, out_f32, m, n, k, stream_);
  } else {
    gemm_->run(x.data, weight.data, bias_ptr, out.data, out_f32, m, n, k);
  }
}

}  // namespace hadron::cuda
