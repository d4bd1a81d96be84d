// The GEMV with SiLU-and-mul fused in front (gemv.cuh, GemvInput::kSiluMul): one kernel
// instead of silu_mul's and down_proj's for decode-sized batches.
#include "backends/cuda/gemv.cuh"

namespace hadron::cuda {

void launch_gemv_silu(const void* gate_up, void* activated, const void* w, const void* bias,
                      void* out, int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  gemv::dispatch_rows(m, "gemv_silu rows", [&]<int kM>() {
    gemv::launch_gemv_typed<kM, bf16, gemv::GemvInput::kSiluMul>(gate_up, w, bias, out, n, k, {},
                                                                 activated, stream);
  });
}

}  // namespace hadron::cuda
