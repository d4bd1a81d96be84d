// ids[t] < 0: the token sampled in row -ids[t] - 1 of the previous step (placeholders the
// runner queues before that step's tokens reach the host); rows past n_sampled give token 0.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

__global__ void resolve_token_ids_kernel(int32_t* ids, const int32_t* sampled, int64_t n_ids,
                                         int64_t n_sampled) {
  // Launched with PDL and triggering at once, so the embedding after it is scheduled during it
  // and waits in its own pdl_wait(). H100, same binary, batch 1: Qwen3-8B 188.6 / 188.7 ->
  // 188.7 / 188.8 tok/s, gpt-oss-20b 530.3 / 530.5 -> 531.0 / 530.8
  // (bench/results/experiments-2026-11-27-s26.md).
  pdl_wait();
  pdl_launch_dependents();
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
  launch_pdl(resolve_token_ids_kernel, dim3(ceil_div(n_ids, kThreads)), dim3(kThreads), 0, stream,
             ids, sampled, n_ids, n_sampled);
}

}  // namespace hadron::cuda
