// The GEMV with the residual add + RMSNorm fused in front (gemv.cuh, kNorm): one kernel
// instead of the norm's and the projection's for decode-sized batches.
#include "backends/cuda/gemv.cuh"

namespace hadron::cuda {

void launch_gemv_norm(const GemvNormArgs& norm, const void* w, const void* bias, void* out,
                      int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  const auto launch = [&]<int kM>() {
    gemv::launch_gemv_typed<kM, bf16, true>(nullptr, w, bias, out, n, k, norm, stream);
  };
  switch (m) {
    case 1: return launch.operator()<1>();
    case 2: return launch.operator()<2>();
    case 3: return launch.operator()<3>();
    case 4: return launch.operator()<4>();
    case 5: return launch.operator()<5>();
    case 6: return launch.operator()<6>();
    case 7: return launch.operator()<7>();
    case 8: return launch.operator()<8>();
    default: fail_dispatch("gemv_norm rows", static_cast<int>(m), {1, 2, 3, 4, 5, 6, 7, 8});
  }
}

}  // namespace hadron::cuda
