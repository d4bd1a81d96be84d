// The NCCL communicator on every visible GPU (one thread per GPU in this process, as the
// processes of a real group would be): all-reduce, all-gather and all-to-all against sums and
// copies done on the host, and NVLink multicast switched off by hadron itself.
#include "dist/nccl/nccl_communicator.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace hadron {
namespace {

int gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

TEST(NcclCommunicator, CollectivesMatchTheHostOnEveryGpu) {
  const int world = gpu_count();
  if (world < 2) GTEST_SKIP() << "needs two GPUs, found " << world;
  const int64_t n = 4099;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs(world, std::vector<float>(world * n));
  for (auto& values : inputs)
    for (float& v : values) v = dist(rng);
  std::vector<std::vector<float>> reduced(world), gathered(world), exchanged(world);
  const NcclUniqueId id = nccl_unique_id();
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      cudaSetDevice(r);
      float *x = nullptr, *all = nullptr, *swapped = nullptr;
      const size_t bytes = world * n * sizeof(float);
      cudaMalloc(&x, bytes), cudaMalloc(&all, bytes * world), cudaMalloc(&swapped, bytes);
      const auto comm = make_nccl_communicator(id, r, world, r, nullptr);
      const auto on_gpu = [](float* p, int64_t count) {
        return Tensor::view_of(p, DType::F32, {count}, Device::CUDA);
      };
      cudaMemcpy(x, inputs[r].data(), bytes, cudaMemcpyHostToDevice);
      comm->all_to_all(on_gpu(x, world * n), on_gpu(swapped, world * n));
      comm->all_gather(on_gpu(x, world * n), on_gpu(all, world * world * n));
      comm->all_reduce_sum(on_gpu(x, world * n));
      comm->barrier();
      reduced[r].resize(world * n), gathered[r].resize(world * world * n);
      exchanged[r].resize(world * n);
      cudaMemcpy(reduced[r].data(), x, bytes, cudaMemcpyDeviceToHost);
      cudaMemcpy(gathered[r].data(), all, bytes * world, cudaMemcpyDeviceToHost);
      cudaMemcpy(exchanged[r].data(), swapped, bytes, cudaMemcpyDeviceToHost);
      cudaFree(x), cudaFree(all), cudaFree(swapped);
    });
  for (std::thread& rank : ranks) rank.join();
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  for (int r = 0; r < world; ++r)
    for (int64_t i = 0; i < world * n; ++i) {
      double sum = 0;
      for (int q = 0; q < world; ++q) sum += inputs[q][i];
      ASSERT_NEAR(reduced[r][i], sum, 1e-5) << "rank " << r << " element " << i;
      for (int q = 0; q < world; ++q)
        ASSERT_EQ(gathered[r][q * world * n + i], inputs[q][i]) << "rank " << r;
    }
  for (int r = 0; r < world; ++r)
    for (int j = 0; j < world; ++j)
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(exchanged[j][r * n + i], inputs[r][j * n + i]);
}

}  // namespace
}  // namespace hadron
