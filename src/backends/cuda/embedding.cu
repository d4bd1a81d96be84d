// Token embedding lookup: one thread per 8-element vector of an output row.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

__global__ void embedding_kernel(const int32_t* ids, const bf16* table, bf16* out,
                                 int64_t n_vectors, int64_t vectors_per_row, int64_t vocab) {
  pdl_wait();
  pdl_launch_dependents();
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n_vectors) return;
  const int64_t t = i / vectors_per_row, c = i % vectors_per_row;
  const int32_t id = ids[t];
  Bf16x8 v{};
  if (id >= 0 && id < vocab) v = load8(table + (id * vectors_per_row + c) * 8);
  store8(out + i * 8, v);
}

}  // namespace

void launch_embedding(const int32_t* ids, const void* table, void* out, int64_t n_tokens,
                      int64_t hidden, int64_t vocab, cudaStream_t stream) {
  const int64_t n_vectors = n_tokens * hidden / 8;
  if (n_vectors == 0) return;
  constexpr int kThreads = 256;
  launch_pdl(embedding_kernel, dim3(ceil_div(n_vectors, kThreads)), dim3(kThreads), 0, stream, ids,
             static_cast<const bf16*>(table), static_cast<bf16*>(out), n_vectors, hidden / 8,
             vocab);
}

}  // namespace hadron::cuda
