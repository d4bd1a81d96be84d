// Row gather (hidden states of the rows that produce logits): 16 bytes per thread.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

__global__ void gather_rows_kernel(const uint4* x, const int32_t* rows, uint4* out,
                                   int64_t n_vectors, int64_t vectors_per_row) {
  pdl_wait();
  pdl_launch_dependents();
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n_vectors) return;
  const int64_t r = i / vectors_per_row, c = i % vectors_per_row;
  out[i] = x[rows[r] * vectors_per_row + c];
}

}  // namespace

void launch_gather_rows(const void* x, const int32_t* rows, void* out, int64_t n_rows,
                        int64_t row_bytes, cudaStream_t stream) {
  const int64_t n_vectors = n_rows * row_bytes / 16;
  if (n_vectors == 0) return;
  constexpr int kThreads = 256;
  launch_pdl(gather_rows_kernel, dim3(ceil_div(n_vectors, kThreads)), dim3(kThreads), 0, stream,
             static_cast<const uint4*>(x), rows, static_cast<uint4*>(out), n_vectors,
             row_bytes / 16);
}

}  // namespace hadron::cuda
