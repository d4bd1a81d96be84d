// ids[t] < 0: the token sampled in row -ids[t] - 1 of the previous step (placeholders the
// runner queues before that step's tokens reach the host); rows past n_sampled give token 0.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"

namespace hadron::cuda {
namespace {

__global__ void resolve_token_ids_kernel(int32_t* ids, const int32_t* sampled, int64_t n_ids,
                                         int64_t n_sampled) {
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (t >= n_ids) return;
  const int32_t id = ids[t];
  if (id >= 0) return;
  const int64_t row = -int64_t{id} - 1;
  ids[t] = row < n_sampled ? sampled[row] : 0;
}

}  // namespace

void launch_resolve_token_ids(int32_t* ids, const int32_t* sampled, int64_t n_ids,
                              int64_t n_sampled, cudaStream_t stream) {
  if (n_ids == 0) return;
  constexpr int kThreads = 256;
  resolve_token_ids_kernel<<<(n_ids + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      ids, sampled, n_ids, n_sampled);
  CUDA_CHECK_LAUNCH();
}

}  // namespace hadron::cuda
