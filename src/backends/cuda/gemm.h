// cuBLASLt matrix products for linear layers: out[M, N] = x[M, K] @ w[N, K]^T (+ bias[N]),
// bf16 inputs, fp32 accumulation, bf16 or f32 output. A persistent workspace and, per
// shape, a cached plan: descriptors and the fastest of the heuristic's top candidates, timed
// on first use.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>

namespace hadron::cuda {

class Gemm {
 public:
  explicit Gemm(cudaStream_t stream);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // bias: null or [n] in out's dtype.
  void run(const void* x, const void* w, const void* bias, void* out, bool out_f32, int64_t m,
           int64_t n, int64_t k);

 private:
  // m, n, k, out_f32, has_bias, pointer alignment in bytes.
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, bool, int>;
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  struct Operands {
    const void* x;
    const void* w;
    const void* bias;
    void* out;
  };
  Plan& plan_for(const Key& key, const Operands& operands);
  cublasLtMatmulAlgo_t fastest(Plan& plan, const cublasLtMatmulHeuristicResult_t* results,
                               int n_results, const Operands& operands);

  cudaStream_t stream_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<Key, Plan> plans_;
};

}  // namespace hadron::cuda
