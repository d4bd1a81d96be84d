// The GEMV with the residual add + RMSNorm fused in front (gemv.cuh, GemvInput::kNorm): one
// kernel instead of the norm's and the projection's for decode-sized batches.
#include "backends/cuda/gemv.cuh"

namespace hadron::cuda {

void launch_gemv_norm(const GemvNormArgs& norm, const void* w, const void* bias, void* out,
                      int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  gemv::dispatch_rows(m, "gemv_norm rows", [&]<int kM>() {
    gemv::launch_gemv_typed<kM, bf16, gemv::GemvInput::kNorm>(nullptr, w, bias, out, n, k, norm,
                                                              nullptr, stream);
  });
}

}  // namespace hadron::cuda
