// Skinny matrix product for decode (M <= 8 rows): bandwidth-bound, so every warp streams one
// weight row with 16-byte loads, kUnroll of them in flight per lane, and reuses each weight
// vector for all M activation rows (which stay in L1/L2: M * K * 2 bytes).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kUnroll = 8;  // 16-byte loads in flight per lane

template <int kM, typename Out>
__global__ void __launch_bounds__(kWarps * 32)
    gemv_kernel(const bf16* x, const bf16* w, const Out* bias, Out* out, int64_t n, int64_t k) {
  const int lane = threadIdx.x % 32;
  const int64_t row = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32;
  if (row >= n) return;
  const int64_t n_vec = k / 8;
  const bf16* w_row = w + row * k;
  float acc[kM] = {};
  for (int64_t base = lane; base < n_vec; base += 32 * kUnroll) {
    Bf16x8 wv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = base + u * 32;
      if (c < n_vec) wv[u] = *reinterpret_cast<const Bf16x8*>(__builtin_assume_aligned(w_row + c * 8, 16));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = base + u * 32;
      if (c >= n_vec) break;
      float wf[8];
      to_f32(wv[u], wf);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float xf[8];
        to_f32(load8(x + m * k + c * 8), xf);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[m] += wf[e] * xf[e];
      }
    }
  }
#pragma unroll
  for (int m = 0; m < kM; ++m) acc[m] = warp_sum(acc[m]);
  if (lane == 0) {
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      float value = acc[m];
      if (bias != nullptr) value += static_cast<float>(bias[row]);
      if constexpr (sizeof(Out) == 4) {
        out[m * n + row] = value;
      } else {
        out[m * n + row] = __float2bfloat16(value);
      }
    }
  }
}

template <int kM>
void launch_with(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                 int64_t n, int64_t k, cudaStream_t stream) {
  const int64_t blocks = ceil_div(n, kWarps);
  const auto* x_ptr = static_cast<const bf16*>(x);
  const auto* w_ptr = static_cast<const bf16*>(w);
  if (out_f32) {
    gemv_kernel<kM, float><<<blocks, kWarps * 32, 0, stream>>>(
        x_ptr, w_ptr, static_cast<const float*>(bias), static_cast<float*>(out), n, k);
  } else {
    gemv_kernel<kM, bf16><<<blocks, kWarps * 32, 0, stream>>>(
        x_ptr, w_ptr, static_cast<const bf16*>(bias), static_cast<bf16*>(out), n, k);
  }
  CUDA_CHECK_LAUNCH();
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
