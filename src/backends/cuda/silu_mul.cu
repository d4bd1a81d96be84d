// SiLU-and-mul: out = silu(gate) * up with gate_up = [gate | up], 8 elements per thread.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/silu_mul.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

__global__ void silu_mul_kernel(const bf16* gate_up, bf16* out, int64_t n_vectors,
                                int64_t vectors_per_row) {
  pdl_wait();
  pdl_launch_dependents();
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n_vectors) return;
  const int64_t t = i / vectors_per_row, c = i % vectors_per_row;
  const bf16* gate_ptr = gate_up + (t * 2 * vectors_per_row + c) * 8;
  store8(out + i * 8, silu_mul8(load8(gate_ptr), load8(gate_ptr + vectors_per_row * 8)));
}

}  // namespace

void launch_silu_mul(const void* gate_up, void* out, int64_t n_tokens, int64_t inter,
                     cudaStream_t stream) {
  const int64_t n_vectors = n_tokens * inter / 8;
  if (n_vectors == 0) return;
  constexpr int kThreads = 256;
  launch_pdl(silu_mul_kernel, dim3(ceil_div(n_vectors, kThreads)), dim3(kThreads), 0, stream,
             static_cast<const bf16*>(gate_up), static_cast<bf16*>(out), n_vectors, inter / 8);
}

}  // namespace hadron::cuda
