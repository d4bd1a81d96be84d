// What a decode step's structure costs on this card: the numbers for choosing between a kernel
// per stage (today's decode graphs) and one persistent kernel whose stages meet at grid
// barriers (docs/performance-notes.md, "CUDA graphs, PDL"). Three measurements:
//  1. a stage boundary: kStages dependent stages, each a grid of one 256-thread block per SM
//     that reads what the stage before wrote, as a CUDA graph of kernels (with programmatic
//     dependent launch, and without) against one kernel passing a grid barrier between
//     stages; each with a tiny stage (4 KB) and a weight-sized one (16 MB streamed from HBM,
//     a different 16 MB per stage, as a layer's GEMVs read);
//  2. an L2 bulk prefetch (cp.async.bulk.prefetch.L2) of 8 MB issued from one SM against the
//     same bytes issued from every SM: how long until the kernel that issues it is done.
// Prints microseconds per stage or per launch (median_timing.h's medians).
//
//   sync_cost_bench
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "median_timing.h"

namespace hadron::cuda {
namespace {

constexpr int kThreads = 256, kStages = 64;
constexpr int64_t kTinyBytes = 4 << 10, kWeightBytes = int64_t{16} << 20;

// One stage's work: every block reads the previous stage's 4 KB output (a dependency, as a
// GEMV reads its input), then its share of `stream_bytes` at `weights` (grid-stride 16-byte
// loads), and block 0 writes this stage's output. The fold keeps every load live.
__device__ __forceinline__ void stage_work(const float* in, float* out, const int4* weights,
                                           int64_t stream_vectors) {
  float carried = 0;
  for (int i = threadIdx.x; i < kTinyBytes / 4; i += blockDim.x) carried += __ldcg(in + i);
  int fold = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < stream_vectors;
       i += stride) {
    const int4 v = __ldcs(weights + i);
    fold ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (blockIdx.x == 0)
    for (int i = threadIdx.x; i < kTinyBytes / 4; i += blockDim.x)
      out[i] = carried * 0.5f + static_cast<float>(fold == 0x5eed);
}

// Stage s of the chain as a kernel of its own; waits on the stage before (PDL: launch.cuh).
__global__ void __launch_bounds__(kThreads)
    stage_kernel(const float* in, float* out, const int4* weights, int64_t stream_vectors) {
  pdl_wait();
  pdl_launch_dependents();
  stage_work(in, out, weights, stream_vectors);
}

// Every block arrives on `counter`; the last one resets it and bumps `generation` (a release
// after every block's arrival), which the others wait for (acquire). Blocks must all be
// resident (one per SM here, launched cooperatively).
__device__ __forceinline__ void grid_barrier(unsigned* counter, unsigned* generation) {
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned seen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(generation));
    unsigned arrived;  // acq_rel: publishes this block's writes, sees the earlier arrivals'
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                 : "=r"(arrived)
                 : "l"(counter)
                 : "memory");
    if (arrived == gridDim.x - 1) {
      *counter = 0;
      asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(generation) : "memory");
    } else {
      unsigned now = seen;
      while (now == seen)
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(now) : "l"(generation));
    }
  }
  __syncthreads();
}

// All kStages stages in one kernel, a grid barrier after each.
__global__ void __launch_bounds__(kThreads)
    persistent_kernel(float* ping, float* pong, const int4* weights, int64_t stream_vectors,
                      unsigned* counter, unsigned* generation) {
  for (int s = 0; s < kStages; ++s) {
    stage_work(s % 2 ? pong : ping, s % 2 ? ping : pong, weights + s * stream_vectors,
               stream_vectors);
    grid_barrier(counter, generation);
  }
}

// Prefetches `bytes` at `data` into L2 in 64 KB pieces, spread over the blocks (their first
// threads issue them).
__global__ void prefetch_kernel(const char* data, int64_t bytes) {
  constexpr int64_t kPiece = 64 << 10;
  if (threadIdx.x != 0) return;
  for (int64_t offset = blockIdx.x * kPiece; offset < bytes; offset += gridDim.x * kPiece) {
    const auto size = static_cast<uint32_t>(bytes - offset < kPiece ? bytes - offset : kPiece);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(data + offset), "r"(size)
                 : "memory");
  }
}

template <typename... Params, typename... Args>
void launch(bool pdl, void (*kernel)(Params...), dim3 grid, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = pdl ? 1 : 0;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}

// The chain of stage kernels as one graph.
cudaGraphExec_t chain_graph(bool pdl, int n_sms, float* ping, float* pong, const int4* weights,
                            int64_t stream_vectors, cudaStream_t stream) {
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int s = 0; s < kStages; ++s)
    launch(pdl, stage_kernel, dim3(n_sms), stream, s % 2 ? pong : ping, s % 2 ? ping : pong,
           weights + s * stream_vectors, stream_vectors);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

void run() {
  int device = 0, n_sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs; %d stages a run, one %d-thread block per SM\n", prop.name, n_sms,
              kStages, kThreads);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int64_t weight_total = kStages * kWeightBytes;  // 1 GiB: no stage finds its bytes in L2
  void *ping, *pong, *weights, *sync;
  CUDA_CHECK(cudaMalloc(&ping, kTinyBytes));
  CUDA_CHECK(cudaMalloc(&pong, kTinyBytes));
  CUDA_CHECK(cudaMalloc(&weights, weight_total));
  CUDA_CHECK(cudaMalloc(&sync, 2 * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(ping, 0, kTinyBytes));
  CUDA_CHECK(cudaMemset(weights, 1, weight_total));
  CUDA_CHECK(cudaMemset(sync, 0, 2 * sizeof(unsigned)));
  auto* counter = static_cast<unsigned*>(sync);
  auto* ping_f = static_cast<float*>(ping);
  auto* pong_f = static_cast<float*>(pong);
  const auto* weights_v = static_cast<const int4*>(weights);

  for (const int64_t stage_bytes : {int64_t{0}, kWeightBytes}) {
    const int64_t vectors = stage_bytes / 16;
    std::printf("stages reading %s:\n", stage_bytes == 0 ? "4 KB" : "4 KB + 16 MB of weights");
    for (const bool pdl : {false, true}) {
      cudaGraphExec_t exec = chain_graph(pdl, n_sms, ping_f, pong_f, weights_v, vectors, stream);
      const double us =
          median_us(stream, 1, [&](int) { CUDA_CHECK(cudaGraphLaunch(exec, stream)); });
      std::printf("  kernel per stage, graph, %-8s %8.2f us a stage\n", pdl ? "PDL" : "no PDL",
                  us / kStages);
      CUDA_CHECK(cudaGraphExecDestroy(exec));
    }
    int64_t stream_vectors = vectors;
    unsigned* generation = counter + 1;
    void* args[] = {&ping_f, &pong_f, &weights_v, &stream_vectors, &counter, &generation};
    const double us = median_us(stream, 1, [&](int) {
      CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(persistent_kernel),
                                             dim3(n_sms), dim3(kThreads), args, 0, stream));
    });
    std::printf("  one kernel, grid barriers      %8.2f us a stage\n", us / kStages);
    if (stage_bytes > 0)
      std::printf("  (16 MB at 3.1 TB/s: %.2f us)\n", kWeightBytes / 3.1e12 * 1e6);
  }

  // Prefetch: 8 MB from one SM, then from all; each launch a fresh 8 MB of the weights.
  constexpr int64_t kPrefetchBytes = int64_t{8} << 20;
  const int n_regions = static_cast<int>(weight_total / kPrefetchBytes);
  for (const int blocks : {1, n_sms}) {
    const double us = median_us(stream, n_regions, [&](int region) {
      prefetch_kernel<<<blocks, 32, 0, stream>>>(
          static_cast<const char*>(weights) + region * kPrefetchBytes, kPrefetchBytes);
      CUDA_CHECK(cudaGetLastError());
    });
    std::printf("L2 prefetch of 8 MB from %3d SM%s: %8.2f us a launch (%.2f TB/s)\n", blocks,
                blocks == 1 ? " " : "s", us, kPrefetchBytes / (us * 1e-6) / 1e12);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (void* p : {ping, pong, weights, sync}) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace hadron::cuda

int main() {
  hadron::cuda::run();
  return 0;
}
