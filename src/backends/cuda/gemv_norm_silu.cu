// The GEMV with the residual add + RMSNorm in front and SiLU-and-mul behind (gemv.cuh,
// GemvInput::kNorm, GemvOutput::kSiluPairs): a gated MLP's norm, gate_up product and
// activation in one kernel for decode-sized batches, so the down projection reads finished
// activations.
#include "backends/cuda/gemv.cuh"

namespace hadron::cuda {

void launch_gemv_norm_silu(const GemvNormArgs& norm, const void* w, void* activated, int64_t m,
                           int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  gemv::dispatch_rows(m, "gemv_norm_silu rows", [&]<int kM>() {
    gemv::launch_gemv_typed<kM, bf16, gemv::GemvInput::kNorm, gemv::GemvOutput::kSiluPairs>(
        nullptr, w, nullptr, activated, n, k, norm, nullptr, stream);
  });
}

}  // namespace hadron::cuda
