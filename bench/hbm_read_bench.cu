// Read-only HBM bandwidth: what a weight-streaming kernel can reach on this card, by access
// pattern. Every variant reads the same 2 GiB buffer (far above L2) once per launch and folds
// it into a value that is never true, so no load is dead; prints TB/s per variant (median of
// median_timing.h's repeats). What it measured on an H100: docs/performance-notes.md.
//
//   hbm_read_bench
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/cuda_check.h"
#include "median_timing.h"

namespace hadron::cuda {
namespace {

constexpr int64_t kBytes = int64_t{2} << 30;

// One 16-byte load by variant: 0 __ldcs (the GEMV's), 1 .cs with an L2 prefetch size of 256
// bytes, 2 .nc past L1 with 256 bytes, 3 .cs with 128 bytes.
template <int kLoad>
__device__ __forceinline__ int4 load16(const int4* p) {
  if constexpr (kLoad == 0) {
    return __ldcs(p);
  } else {
    int4 v;
    if constexpr (kLoad == 1)
      asm("ld.global.cs.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
          : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
          : "l"(p));
    else if constexpr (kLoad == 2)
      asm("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
          : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
          : "l"(p));
    else
      asm("ld.global.cs.L2::128B.v4.s32 {%0, %1, %2, %3}, [%4];"
          : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
          : "l"(p));
    return v;
  }
}

// Grid-stride 16-byte loads, kUnroll of them in flight per thread: the whole grid sweeps the
// buffer front to back.
template <int kUnroll>
__global__ void grid_stride_kernel(const int4* __restrict__ p, int64_t n, int* sink) {
  int fold = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) fold ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) fold ^= __ldcs(p + i).x;
  if (fold == 0x5eed) *sink = fold;
}

// Each warp streams its own contiguous region, 32 * kUnroll vectors a step (the decode
// GEMV's pattern: one warp per weight row).
template <int kUnroll, int kLoad = 0>
__global__ void warp_rows_kernel(const int4* __restrict__ p, int64_t n, int* sink) {
  int fold = 0;
  const int64_t n_warps = int64_t{gridDim.x} * blockDim.x / 32;
  const int64_t warp = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int64_t per_warp = (n + n_warps - 1) / n_warps;
  const int4* region = p + warp * per_warp;
  const int64_t left = n - warp * per_warp;
  const int64_t count = left < 0 ? 0 : (left < per_warp ? left : per_warp);
  int64_t i = threadIdx.x % 32;
  for (; i + 32 * (kUnroll - 1) < count; i += 32 * kUnroll) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load16<kLoad>(region + i + 32 * u);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) fold ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += 32) fold ^= load16<kLoad>(region + i).x;
  if (fold == 0x5eed) *sink = fold;
}

// Each block streams its contiguous region through a ring of kStages bulk copies of kChunk
// bytes into shared memory (thread 0 issues them), and its threads read each stage once.
// Regions are whole chunks: ring_bytes() of the buffer are read.
int64_t ring_bytes(int blocks, int chunk) { return kBytes / blocks / chunk * chunk * blocks; }
template <int kStages, int kChunk>
__global__ void bulk_ring_kernel(const char* __restrict__ p, int64_t bytes, int* sink) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ uint64_t full[kStages];
  const int64_t per_block = bytes / gridDim.x / kChunk * kChunk;
  const char* region = p + blockIdx.x * per_block;
  const int n_chunks = static_cast<int>(per_block / kChunk);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(&full[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  auto issue = [&](int c) {
    uint64_t* barrier = &full[c % kStages];
    mbarrier_expect_bytes(barrier, kChunk);
    bulk_copy_to_shared(ring + (c % kStages) * kChunk, region + int64_t{c} * kChunk, kChunk,
                        barrier);
  };
  if (threadIdx.x == 0)
    for (int c = 0; c < kStages && c < n_chunks; ++c) issue(c);
  int fold = 0;
  for (int c = 0; c < n_chunks; ++c) {
    mbarrier_wait(&full[c % kStages], (c / kStages) & 1);
    const auto* stage = reinterpret_cast<const int4*>(ring + (c % kStages) * kChunk);
    for (int i = threadIdx.x; i < kChunk / 16; i += blockDim.x) fold ^= stage[i].x;
    __syncthreads();  // the stage is read: refill it
    if (threadIdx.x == 0 && c + kStages < n_chunks) issue(c + kStages);
  }
  if (fold == 0x5eed) *sink = fold;
}

void report(const char* variant, double us, int64_t bytes = kBytes) {
  std::printf("%-44s %7.3f TB/s  (%.1f us)\n", variant, bytes / (us * 1e-6) / 1e12, us);
}

void run() {
  int device = 0, n_sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs, reading %.1f GiB per launch\n", prop.name, n_sms,
              kBytes / double(1 << 30));
  char* buffer = nullptr;
  int* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, kBytes));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(int)));
  CUDA_CHECK(cudaMemset(buffer, 1, kBytes));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto* vectors = reinterpret_cast<const int4*>(buffer);
  const int64_t n_vectors = kBytes / 16;
  char name[96];

  for (int threads : {256, 512, 1024}) {
    for (int per_sm : {1, 2, 4}) {
      if (threads * per_sm > 2048) continue;
      const dim3 grid(n_sms * per_sm);
      std::snprintf(name, sizeof(name), "grid-stride x8, %d blocks/SM of %d", per_sm, threads);
      report(name, median_us(stream, 1, [&](int) {
               grid_stride_kernel<8><<<grid, threads, 0, stream>>>(vectors, n_vectors, sink);
             }));
    }
  }
  for (int per_sm : {2, 4}) {
    std::snprintf(name, sizeof(name), "warp rows x8, %d blocks/SM of 256", per_sm);
    report(name, median_us(stream, 1, [&](int) {
             warp_rows_kernel<8><<<n_sms * per_sm, 256, 0, stream>>>(vectors, n_vectors, sink);
           }));
  }
  // The warp-rows pattern at the GEMV's 2 blocks/SM of 256 threads, by load variant.
  const auto warp_rows = [&](auto kernel, const char* load) {
    std::snprintf(name, sizeof(name), "warp rows x8, 2 blocks/SM of 256, %s", load);
    report(name, median_us(stream, 1, [&](int) {
             kernel<<<n_sms * 2, 256, 0, stream>>>(vectors, n_vectors, sink);
           }));
  };
  warp_rows(warp_rows_kernel<8, 0>, "ld.cs");
  warp_rows(warp_rows_kernel<8, 1>, "ld.cs.L2::256B");
  warp_rows(warp_rows_kernel<8, 2>, "ld.nc.L1::no_allocate.L2::256B");
  warp_rows(warp_rows_kernel<8, 3>, "ld.cs.L2::128B");
  const auto ring = [&](auto kernel, int stages, int chunk, int per_sm) {
    const int shared_bytes = stages * chunk;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
    std::snprintf(name, sizeof(name), "bulk ring %d x %d KB, %d blocks/SM of 128", stages,
                  chunk / 1024, per_sm);
    report(name,
           median_us(stream, 1,
                     [&](int) {
                       kernel<<<n_sms * per_sm, 128, shared_bytes, stream>>>(buffer, kBytes, sink);
                     }),
           ring_bytes(n_sms * per_sm, chunk));
  };
  ring(bulk_ring_kernel<4, 16384>, 4, 16384, 1);
  ring(bulk_ring_kernel<8, 16384>, 8, 16384, 1);
  ring(bulk_ring_kernel<4, 16384>, 4, 16384, 2);
  ring(bulk_ring_kernel<12, 8192>, 12, 8192, 2);
  CUDA_CHECK(cudaGetLastError());

  // A device-to-device copy of half the buffer moves as many bytes (read + write).
  report("cudaMemcpy of half (read + write)", median_us(stream, 1, [&](int) {
           CUDA_CHECK(cudaMemcpyAsync(buffer + kBytes / 2, buffer, kBytes / 2,
                                      cudaMemcpyDeviceToDevice, stream));
         }));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(sink));
  CUDA_CHECK(cudaFree(buffer));
}

}  // namespace
}  // namespace hadron::cuda

int main() {
  hadron::cuda::run();
  return 0;
}
