// Rotary embedding in place: one thread per rotated pair.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

template <bool kNeox>
__global__ void rope_kernel(bf16* x, const int32_t* positions, const float* cos_sin,
                            int64_t n_pairs, int64_t n_heads, int64_t head_dim, int64_t half) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n_pairs) return;
  const int64_t pair = i % half, head = i / half;  // head: t * n_heads + h
  const int64_t t = head / n_heads;
  const float* row = cos_sin + positions[t] * 2 * half;
  const float cos = row[pair], sin = row[half + pair];
  bf16* base = x + head * head_dim;
  const int64_t a = kNeox ? pair : 2 * pair, b = kNeox ? pair + half : 2 * pair + 1;
  const float x1 = __bfloat162float(base[a]), x2 = __bfloat162float(base[b]);
  base[a] = __float2bfloat16(x1 * cos - x2 * sin);
  base[b] = __float2bfloat16(x2 * cos + x1 * sin);
}

}  // namespace

void launch_rope(void* x, const int32_t* positions, const float* cos_sin, int64_t n_tokens,
                 int64_t n_heads, int64_t head_dim, int64_t rotary_dim, bool neox,
                 cudaStream_t stream) {
  const int64_t half = rotary_dim / 2, n_pairs = n_tokens * n_heads * half;
  if (n_pairs == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = ceil_div(n_pairs, kThreads);
  auto* x_ptr = static_cast<bf16*>(x);
  if (neox) {
    rope_kernel<true><<<blocks, kThreads, 0, stream>>>(x_ptr, positions, cos_sin, n_pairs, n_heads,
                                                       head_dim, half);
  } else {
    rope_kernel<false><<<blocks, kThreads, 0, stream>>>(x_ptr, positions, cos_sin, n_pairs, n_heads,
                                                        head_dim, half);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace hadron::cuda
