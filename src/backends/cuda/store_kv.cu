// Paged KV-cache write: one thread per 8-element vector of a token's K and V.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

__global__ void store_kv_kernel(const bf16* k, const bf16* v, bf16* k_cache, bf16* v_cache,
                                const int32_t* slot_mapping, int64_t n_vectors,
                                int64_t vectors_per_token) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n_vectors) return;
  const int64_t t = i / vectors_per_token, c = i % vectors_per_token;
  const int64_t slot = slot_mapping[t];
  if (slot < 0) return;  // padding tokens (CUDA-graph batches) write nothing
  const int64_t dst = (slot * vectors_per_token + c) * 8;
  store8(k_cache + dst, load8(k + i * 8));
  store8(v_cache + dst, load8(v + i * 8));
}

}  // namespace

void launch_store_kv(const void* k, const void* v, void* k_cache, void* v_cache,
                     const int32_t* slot_mapping, int64_t n_tokens, int64_t token_elems,
                     cudaStream_t stream) {
  const int64_t n_vectors = n_tokens * token_elems / 8;
  if (n_vectors == 0) return;
  constexpr int kThreads = 256;
  store_kv_kernel<<<ceil_div(n_vectors, kThreads), kThreads, 0, stream>>>(
      static_cast<const bf16*>(k), static_cast<const bf16*>(v), static_cast<bf16*>(k_cache),
      static_cast<bf16*>(v_cache), slot_mapping, n_vectors, token_elems / 8);
  CUDA_CHECK_LAUNCH();
}

}  // namespace hadron::cuda
