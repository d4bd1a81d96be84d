// A step's first and last ops (Backend::begin_step, end_step): the inputs image is read from
// pinned host memory and the sampled tokens written into it by the kernels themselves (the
// host buffers are mapped through unified addressing), so no copy-engine operation sits
// between one step's kernels and the next step's. Before, each step was [inputs HtoD] ->
// graph -> [tokens DtoH], and a gpt-oss-20b batch-1 step spent ~15 us between its graphs
// around the two copies (bench/results/traces-h100-2026-11-28-s29.txt).
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kThreads = 256;

// One 8-byte unit of the payload a thread; counter = {turns begun, blocks done this turn}.
__global__ void __launch_bounds__(kThreads)
    begin_step_kernel(const uint8_t* image0, const uint8_t* image1, int64_t header_bytes,
                      int32_t* counter, uint2* inputs, int64_t n_units, int64_t n_ids,
                      const int32_t* sampled, int64_t n_sampled) {
  // Before pdl_wait: the turn (only this kernel writes it, and the previous step's began at
  // least two kernels ago, so it finished: launch.cuh) and the image, host memory the host
  // wrote before it queued the step.
  const int32_t turn = __ldcg(counter);
  const uint8_t* image = (turn & 1) ? image1 : image0;
  const int64_t u = blockIdx.x * int64_t{kThreads} + threadIdx.x;
  uint2 unit{};
  if (u < n_units) unit = reinterpret_cast<const uint2*>(image + header_bytes)[u];
  if (u == 0 && *reinterpret_cast<const uint32_t*>(image) != static_cast<uint32_t>(turn))
    __trap();  // host and device out of step: these would be another step's inputs
  pdl_wait();
  pdl_launch_dependents();
  if (u < n_units) {
    int32_t words[2] = {static_cast<int32_t>(unit.x), static_cast<int32_t>(unit.y)};
    for (int j = 0; j < 2; ++j) {
      if (2 * u + j >= n_ids || words[j] >= 0) continue;
      const int64_t row = -int64_t{words[j]} - 1;
      words[j] = row < n_sampled ? sampled[row] : 0;
    }
    inputs[u] = make_uint2(static_cast<uint32_t>(words[0]), static_cast<uint32_t>(words[1]));
  }
  // The last block to finish starts the next turn (every block has read this one by then).
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&counter[1], 1) == static_cast<int32_t>(gridDim.x) - 1) {
      counter[1] = 0;
      counter[0] = static_cast<int32_t>(static_cast<uint32_t>(turn) + 1);  // wraps as the host's
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    end_step_kernel(const int32_t* sampled, int64_t n, int32_t* tokens0, int32_t* tokens1,
                    const int32_t* counter) {
  pdl_wait();
  pdl_launch_dependents();
  int32_t* tokens = ((__ldcg(counter) - 1) & 1) ? tokens1 : tokens0;  // this step's turn
  for (int64_t i = threadIdx.x; i < n; i += kThreads) tokens[i] = sampled[i];
  // No __threadfence_system(): the host reads the tokens only after an event recorded after
  // this kernel completes, which makes its writes visible (dropping the fence, with the
  // decode gather in decoder_model.cpp: gpt-oss-20b batch 1 +0.13%).
}

}  // namespace

void launch_begin_step(const StepIo& io, void* inputs, int64_t n_bytes, int64_t n_ids,
                       const int32_t* sampled, int64_t n_sampled, cudaStream_t stream) {
  const int64_t n_units = n_bytes / 8;
  launch_pdl(begin_step_kernel, dim3(ceil_div(std::max<int64_t>(n_units, 1), kThreads)),
             dim3(kThreads), 0, stream, static_cast<const uint8_t*>(io.images[0]),
             static_cast<const uint8_t*>(io.images[1]), io.header_bytes, io.counter,
             static_cast<uint2*>(inputs), n_units, n_ids, sampled, n_sampled);
}

void launch_end_step(const StepIo& io, const int32_t* sampled, int64_t n, cudaStream_t stream) {
  launch_pdl(end_step_kernel, dim3(1), dim3(kThreads), 0, stream, sampled, n, io.tokens[0],
             io.tokens[1], static_cast<const int32_t*>(io.counter));
}

}  // namespace hadron::cuda
