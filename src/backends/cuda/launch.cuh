// Programmatic dependent launch (PDL, sm_90+): a kernel launched with launch_pdl may be
// scheduled while the kernel before it on the stream is still finishing, so its launch and
// its first memory requests hide in the predecessor's tail. The contract for such a kernel:
//  - before pdl_wait() it may only read memory no kernel of this step writes (weights,
//    constant tables) or the step's inputs, and must write nothing. The inputs are written by
//    the step's first kernel (begin_step, step_io.cu), but a kernel starts only once the one
//    before it has called pdl_launch_dependents(), after that one's own wait, so the kernel
//    two before it has finished: from the third kernel on, the inputs are in place (the
//    second, the embedding, reads them after its wait);
//  - every thread that goes on to touch activations calls pdl_wait() first, and every block
//    calls it before it exits (so no grid can finish before its predecessor has: a later
//    kernel waiting on this one then also sees everything before it);
//  - pdl_launch_dependents() (after the wait) lets the next kernel be scheduled once every
//    block of this grid has called it or exited.
// A kernel that is not launched this way (cuBLASLt's, memcpy nodes) simply serialises as
// usual, and pdl_wait() in a kernel launched without the attribute returns at once, so the
// same kernels run correctly eagerly, in graphs, and on streams that mix both.
// HADRON_PDL=0 in the environment launches them without the attribute (to measure what it
// brings, or to rule it out).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "backends/cuda/cuda_check.h"

namespace hadron::cuda {

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...) with programmatic stream
// serialisation allowed, in thread-block clusters of cluster_x blocks along x when cluster_x > 1
// (grid.x a multiple of it), then checks the launch.
template <typename... Params, typename... Args>
void launch_pdl_clustered(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                          cudaStream_t stream, unsigned cluster_x, Args&&... args) {
  cudaLaunchAttribute attributes[2]{};
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = pdl_enabled() ? 1 : 0;
  attributes[1].id = cudaLaunchAttributeClusterDimension;
  attributes[1].val.clusterDim.x = cluster_x;
  attributes[1].val.clusterDim.y = 1;
  attributes[1].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = cluster_x > 1 ? 2 : 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(std::forward<Args>(args))...));
}

template <typename... Params, typename... Args>
void launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                cudaStream_t stream, Args&&... args) {
  launch_pdl_clustered(kernel, grid, block, shared_bytes, stream, 1, std::forward<Args>(args)...);
}

// Whether a cluster of cluster_x blocks of `threads` threads and `shared_bytes` of dynamic
// shared memory fits on the current device (checked once per kernel: call it from a static
// initialiser). Opts the kernel in to non-portable sizes (above 8) first.
template <typename... Params>
bool cluster_fits(void (*kernel)(Params...), unsigned cluster_x, int threads, size_t shared_bytes) {
  if (cluster_x > 8)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster_x;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster_x);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes;
  config.attrs = &attribute;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
    (void)cudaGetLastError();  // a device without such clusters is not an error: clear it
    return false;
  }
  return clusters > 0;
}

// Warps of `kernel` resident on the current device at once, launched in blocks of `threads`
// with `shared_bytes` of dynamic shared memory (one-wave kernels size their grids by this).
template <typename... Params>
int64_t resident_warps(void (*kernel)(Params...), int threads, size_t shared_bytes) {
  int device = 0, n_sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  return int64_t{n_sms} * (per_sm > 1 ? per_sm : 1) * (threads / 32);
}

// Blocks of `warps_per_block` warps for one resident wave over n_rows rows (row r to warp
// r mod n_warps), trimmed so that every warp owns ceil(n_rows / resident) rows.
inline int64_t one_wave_blocks(int64_t resident, int64_t n_rows, int warps_per_block) {
  const int64_t rows_per_warp = (n_rows + resident - 1) / resident;
  const int64_t n_warps = (n_rows + rows_per_warp - 1) / rows_per_warp;
  return (n_warps + warps_per_block - 1) / warps_per_block;
}

}  // namespace hadron::cuda
