// The plain GEMV (gemv.cuh): launch_gemv's dispatch of M to the kernel's template, with the
// rows staged in shared memory where they fit.
#include "backends/cuda/gemv.cuh"

namespace hadron::cuda {
namespace {

template <int kM, typename Out>
void launch_with(const void* x, const void* w, const void* bias, void* out, int64_t n, int64_t k,
                 cudaStream_t stream) {
  if (kM * k * int64_t{sizeof(bf16)} <= kGemvStagedMaxBytes) {
    gemv::launch_gemv_typed<kM, Out, gemv::GemvInput::kStaged>(x, w, bias, out, n, k, {}, nullptr,
                                                               stream);
  } else {
    gemv::launch_gemv_typed<kM, Out, gemv::GemvInput::kGlobal>(x, w, bias, out, n, k, {}, nullptr,
                                                               stream);
  }
}

}  // namespace

void launch_gemv(const void* x, const void* w, const void* bias, void* out, bool out_f32, int64_t m,
                 int64_t n, int64_t k, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  gemv::dispatch_rows(m, "gemv rows", [&]<int kM>() {
    if (out_f32)
      launch_with<kM, float>(x, w, bias, out, n, k, stream);
    else
      launch_with<kM, bf16>(x, w, bias, out, n, k, stream);
  });
}

}  // namespace hadron::cuda
