// The plain GEMV (gemv.cuh): launch_gemv's dispatch of M to the kernel's template.
#include "backends/cuda/gemv.cuh"

namespace hadron::cuda {
namespace {

template <int kM>
void launch_with(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                 int64_t n, int64_t k, cudaStream_t stream) {
  if (out_f32) {
    gemv::launch_gemv_typed<kM, float, false>(x, w, bias, out, n, k, {}, stream);
  } else {
    gemv::launch_gemv_typed<kM, bf16, false>(x, w, bias, out, n, k, {}, stream);
  }
}

}  // namespace
void launch_gemv(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                 int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  switch (m) {
    case 1: return launch_with<1>(x, w, bias, out, out_f32, n, k, stream);
    case 2: return launch_with<2>(x, w, bias, out, out_f32, n, k, stream);
    case 3: return launch_with<3>(x, w, bias, out, out_f32, n, k, stream);
    case 4: return launch_with<4>(x, w, bias, out, out_f32, n, k, stream);
    case 5: return launch_with<5>(x, w, bias, out, out_f32, n, k, stream);
    case 6: return launch_with<6>(x, w, bias, out, out_f32, n, k, stream);
    case 7: return launch_with<7>(x, w, bias, out, out_f32, n, k, stream);
    case 8: return launch_with<8>(x, w, bias, out, out_f32, n, k, stream);
    default: fail_dispatch("gemv rows", static_cast<int>(m), {1, 2, 3, 4, 5, 6, 7, 8});
  }
}

}  // namespace hadron::cuda
