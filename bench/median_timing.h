// Shared by the CUDA micro-benchmarks (cuda_ops_bench, moe_ops_bench).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "backends/cuda/cuda_check.h"

namespace hadron::cuda {

// Median time per launch of `launch(copy)` in microseconds, copy rotating over n_copies
// input sets. Each repeat times kBatch back-to-back launches, so the launch latency that a
// stream (or a graph) hides is not counted against short kernels.
inline double median_us(cudaStream_t stream, int n_copies, const std::function<void(int)>& launch) {
  constexpr int kWarmup = 5, kRepeats = 30, kBatch = 10;
  for (int i = 0; i < kWarmup; ++i) launch(i % n_copies);
  std::vector<cudaEvent_t> events(2 * kRepeats);
  for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < kRepeats; ++i) {
    CUDA_CHECK(cudaEventRecord(events[2 * i], stream));
    for (int b = 0; b < kBatch; ++b) launch((i * kBatch + b) % n_copies);
    CUDA_CHECK(cudaEventRecord(events[2 * i + 1], stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> ms(kRepeats);
  for (int i = 0; i < kRepeats; ++i)
    CUDA_CHECK(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]));
  for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
  std::nth_element(ms.begin(), ms.begin() + kRepeats / 2, ms.end());
  return ms[kRepeats / 2] * 1000.0 / kBatch;
}

}  // namespace hadron::cuda
