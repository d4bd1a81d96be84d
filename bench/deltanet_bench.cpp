// Kernel micro-benchmark of the gated DeltaNet ops at Qwen3.5-27B's shapes (16 key heads and 48
// value heads of 128, convolution of 4 over 10,240 channels): the causal convolution and the
// delta rule for one prefill of 1,024 to 8,192 tokens and for decode batches of 1 to 256. The
// delta rule's work is 6 Dk Dv flops per row and value head (decay, S^T k, update, S^T q); its
// state traffic 2 x 4 Dk Dv bytes per sequence and value head (read and written once a step).
//
//   deltanet_bench
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "median_timing.h"

namespace hadron::cuda {
namespace {

constexpr int kKeyHeads = 16, kValueHeads = 48, kHeadDim = 128, kKernel = 4;
constexpr int kConvDim = 2 * kKeyHeads * kHeadDim + kValueHeads * kHeadDim;

struct Device {
  std::vector<void*> blocks;
  ~Device() {
    for (void* p : blocks) cudaFree(p);
  }
  // Device memory of `bytes`, filled with small values (0x3c00 pairs: bf16 1.0 / f32 ~0.008).
  void* alloc(size_t bytes) {
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemset(p, 0x3c, bytes));
    blocks.push_back(p);
    return p;
  }
};

// n_seqs sequences of q_len rows each, continuing from state (positions past 0).
void run(int n_seqs, int q_len, cudaStream_t stream) {
  Device dev;
  const int n_tokens = n_seqs * q_len;
  std::vector<int32_t> cu(n_seqs + 1), positions(n_tokens), slots(n_seqs);
  for (int s = 0; s <= n_seqs; ++s) cu[s] = s * q_len;
  for (int t = 0; t < n_tokens; ++t) positions[t] = 1 + t % q_len;
  for (int s = 0; s < n_seqs; ++s) slots[s] = s;
  auto upload = [&](const std::vector<int32_t>& v) {
    void* p = dev.alloc(v.size() * sizeof(int32_t));
    CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    return static_cast<const int32_t*>(p);
  };
  const LinearAttentionArgs args{upload(cu), upload(positions), upload(slots), n_seqs, q_len};
  void* x = dev.alloc(size_t{2} * n_tokens * kConvDim);
  void* mixed = dev.alloc(size_t{2} * n_tokens * kConvDim);
  void* weight = dev.alloc(size_t{2} * kConvDim * kKernel);
  void* conv_states = dev.alloc(size_t{2} * n_seqs * kConvDim * (kKernel - 1));
  void* ba = dev.alloc(size_t{4} * n_tokens * 2 * kValueHeads);
  void* params = dev.alloc(size_t{4} * kValueHeads);
  auto* states =
      static_cast<float*>(dev.alloc(size_t{4} * n_seqs * kValueHeads * kHeadDim * kHeadDim));
  void* out = dev.alloc(size_t{2} * n_tokens * kValueHeads * kHeadDim);
  const DeltaRuleShape shape{kKeyHeads, kValueHeads, kHeadDim, kHeadDim};
  const double conv_us = median_us(stream, 1, [&](int) {
    launch_causal_conv1d(args, x, weight, false, conv_states, mixed, kConvDim, kKernel, stream);
  });
  const double rule_us = median_us(stream, 1, [&](int) {
    launch_gated_delta_rule(args, shape, mixed, ba, params, params, true, true, states, out,
                            stream);
  });
  const double flops = 6.0 * n_tokens * kValueHeads * kHeadDim * kHeadDim;
  const double state_bytes = 8.0 * n_seqs * kValueHeads * kHeadDim * kHeadDim;
  std::printf(
      "%5d x %5d | conv %8.1f us | rule %9.1f us  %6.2f TFLOP/s  %7.1f GB/s state | "
      "rule x 48 layers %7.2f ms\n",
      n_seqs, q_len, conv_us, rule_us, flops / rule_us / 1e6, state_bytes / rule_us / 1e3,
      48 * rule_us / 1e3);
}

}  // namespace
}  // namespace hadron::cuda

int main() {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  std::printf("seqs x rows | causal conv1d | gated delta rule\n");
  for (const int rows : {1024, 4096, 8192}) hadron::cuda::run(1, rows, stream);
  for (const int seqs : {1, 8, 64, 256}) hadron::cuda::run(seqs, 1, stream);
  return 0;
}
