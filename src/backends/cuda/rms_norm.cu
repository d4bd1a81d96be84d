// RMSNorm and fused residual-add + RMSNorm over rows of `width` bf16 values.
// One block per row; each thread keeps its 8-element vectors in registers between the
// sum-of-squares pass and the scaling pass, so the row is read once and written once.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/rms_norm.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kThreads = 256;

// The weight (a constant) is read before waiting on the kernel that wrote x (launch.cuh), which
// hides its load where that kernel lets this one start early (our GEMVs and decode GEMM, up to
// 64 rows); past kEarlyWeightRows rows x comes from cuBLASLt, whose kernels do not, so this
// kernel starts only once x is complete and the weight is read after the wait, beside x (kLate):
// one round trip instead of two. Measured both ways (docs/performance-notes.md, "Small
// kernels"): each order wins on its side of kEarlyWeightRows.
constexpr int64_t kEarlyWeightRows = kDecodeGemmMaxRows;

// kVectors: 8-element vectors per thread (ceil(width / 8 / kThreads)).
template <int kVectors, bool kAdd, bool kLate>
__global__ void __launch_bounds__(kThreads)
    rms_norm_kernel(const bf16* x, const bf16* residual, bf16* residual_out, const bf16* weight,
                    bf16* out, int64_t width, float eps) {
  const int64_t row = blockIdx.x;
  const int64_t n_vec = width / 8;
  Bf16x8 w[kVectors];
  const auto load_weight = [&] {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const int64_t c = threadIdx.x + j * kThreads;
      if (c < n_vec) w[j] = load8(weight + c * 8);
    }
  };
  if constexpr (!kLate) load_weight();
  pdl_wait();
  pdl_launch_dependents();
  if constexpr (kLate) load_weight();
  // Every load is issued before the first store (which the compiler may not move them past):
  // one round trip for the row.
  Bf16x8 x_bits[kVectors], residual_bits[kVectors];
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    const int64_t c = threadIdx.x + j * kThreads;
    if (c >= n_vec) break;
    x_bits[j] = load8(x + row * width + c * 8);
    if constexpr (kAdd) residual_bits[j] = load8(residual + row * width + c * 8);
  }
  float values[kVectors][8];
  float sum_squares[1] = {};
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    const int64_t c = threadIdx.x + j * kThreads;
    if (c >= n_vec) break;
    if constexpr (kAdd) {
      store8(residual_out + row * width + c * 8,
             residual_add(residual_bits[j], x_bits[j], values[j]));
    } else {
      to_f32(x_bits[j], values[j]);
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) sum_squares[0] += values[j][e] * values[j][e];
  }
  float inv_rms[1];
  block_inv_rms<kThreads>(sum_squares, width, eps, inv_rms);
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    const int64_t c = threadIdx.x + j * kThreads;
    if (c >= n_vec) break;
    store8(out + row * width + c * 8, normalise(values[j], inv_rms[0], w[j]));
  }
}

template <int kVectors>
void launch_with(const void* x, const void* residual, void* residual_out, const void* weight,
                 void* out, int64_t n_rows, int64_t width, float eps, cudaStream_t stream) {
  const bool late = n_rows > kEarlyWeightRows;
  const auto kernel =
      residual != nullptr
          ? (late ? rms_norm_kernel<kVectors, true, true> : rms_norm_kernel<kVectors, true, false>)
          : (late ? rms_norm_kernel<kVectors, false, true>
                  : rms_norm_kernel<kVectors, false, false>);
  launch_pdl(kernel, dim3(n_rows), dim3(kThreads), 0, stream, static_cast<const bf16*>(x),
             static_cast<const bf16*>(residual), static_cast<bf16*>(residual_out),
             static_cast<const bf16*>(weight), static_cast<bf16*>(out), width, eps);
}

}  // namespace

void launch_rms_norm(const void* x, const void* residual, void* residual_out, const void* weight,
                     void* out, int64_t n_rows, int64_t width, float eps, cudaStream_t stream) {
  if (n_rows == 0) return;
  const int64_t vectors = ceil_div(width / 8, kThreads);
  const auto launch = [&](auto launch_vectors) {
    launch_vectors(x, residual, residual_out, weight, out, n_rows, width, eps, stream);
  };
  switch (vectors) {
    case 1:
      return launch(launch_with<1>);
    case 2:
      return launch(launch_with<2>);
    case 3:
      return launch(launch_with<3>);
    case 4:
      return launch(launch_with<4>);
    case 5:
    case 6:
      return launch(launch_with<6>);
    case 7:
    case 8:
      return launch(launch_with<8>);
    default:
      fail_dispatch("rms_norm width", static_cast<int>(width),
                    {kThreads * 8 * 1, kThreads * 8 * 2, kThreads * 8 * 4, kThreads * 8 * 8});
  }
}

}  // namespace hadron::cuda
