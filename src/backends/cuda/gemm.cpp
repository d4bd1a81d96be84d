#include "backends/cuda/gemm.h"

#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "core/error.h"

namespace hadron::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // what cuBLASLt asks for on Hopper

// The largest power of two up to 256 dividing every address.
int common_alignment(std::initializer_list<const void*> pointers) {
  uintptr_t bits = 256;
  for (const void* p : pointers)
    if (p != nullptr) bits |= reinterpret_cast<uintptr_t>(p);
  return static_cast<int>(bits & (~bits + 1));
}

}  // namespace

Gemm::Gemm(cudaStream_t stream) : stream_(stream), workspace_bytes_(kWorkspaceBytes) {
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

Gemm::~Gemm() {
  for (auto& [key, plan] : plans_) {
    cublasLtMatrixLayoutDestroy(plan.a);
    cublasLtMatrixLayoutDestroy(plan.b);
    cublasLtMatrixLayoutDestroy(plan.c);
    cublasLtMatmulDescDestroy(plan.desc);
  }
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

namespace {

// Timing the candidates costs about 30 runs of the GEMM (over 100 ms at M = 8192), so only
// row counts that recur are timed: decode batches (the CUDA-graph sizes: up to 16, multiples
// of 8 up to 256, of 16 up to 512) and multiples of 512 (full prefill chunks). Steps of other
// sizes (mixed prefill + decode steps take almost any M) take the heuristic's first choice.
bool worth_timing(int64_t m) {
  return m <= 16 || (m % 8 == 0 && m <= 256) || (m % 16 == 0 && m <= 512) || m % 512 == 0;
}

}  // namespace

// Row-major out[M, N] = x[M, K] w[N, K]^T, in cuBLASLt's column-major terms, is
// C = op(A) B with A = w viewed as K x N (ld K, transposed), B = x as K x M (ld K) and
// C = out as N x M (ld N). The bias runs along C's rows, i.e. out's columns.
Gemm::Plan& Gemm::plan_for(const Key& key, const Operands& operands) {
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  const auto [m, n, k, out_f32, has_bias, alignment] = key;
  Plan plan;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                              sizeof transpose));
  CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  if (has_bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                sizeof epilogue));
    const cudaDataType_t bias_type = out_f32 ? CUDA_R_32F : CUDA_R_16BF;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                &bias_type, sizeof bias_type));
  }
  const cudaDataType_t out_type = out_f32 ? CUDA_R_32F : CUDA_R_16BF;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_16BF, k, n, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_16BF, k, m, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.c, out_type, n, m, n));

  cublasLtMatmulPreference_t preference;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference,
                                                    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes_, sizeof workspace_bytes_));
  const uint32_t align = static_cast<uint32_t>(alignment);
  for (auto attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &align, sizeof align));
  constexpr int kCandidates = 8;
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int n_results = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.a, plan.b, plan.c, plan.c, preference,
                                     kCandidates, results, &n_results);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || n_results == 0) {
    cublasLtMatrixLayoutDestroy(plan.a);
    cublasLtMatrixLayoutDestroy(plan.b);
    cublasLtMatrixLayoutDestroy(plan.c);
    cublasLtMatmulDescDestroy(plan.desc);
    HADRON_CHECK(false,
                 "cuBLASLt has no algorithm for [{}, {}] x [{}, {}]^T (out {}, bias {}, "
                 "alignment {}): {}",
                 m, k, n, k, out_f32 ? "f32" : "bf16", has_bias, alignment,
                 cublasLtGetStatusString(status));
  }
  plan.algo = worth_timing(m) ? fastest(plan, results, n_results, operands) : results[0].algo;
  return plans_.emplace(key, plan).first->second;
}

// Times each candidate on the call's own operands (writing `out`, which the call then
// overwrites) and returns the fastest; the heuristic's first choice while the stream is being
// captured into a graph, where nothing can be timed.
cublasLtMatmulAlgo_t Gemm::fastest(Plan& plan, const cublasLtMatmulHeuristicResult_t* results,
                                   int n_results, const Operands& operands) {
  cudaStreamCaptureStatus capture;
  CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
  if (n_results == 1 || capture != cudaStreamCaptureStatusNone) return results[0].algo;
  if (operands.bias != nullptr)
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                &operands.bias, sizeof operands.bias));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const float alpha = 1.0f, beta = 0.0f;
  auto launch = [&](const cublasLtMatmulAlgo_t& algo) {
    return cublasLtMatmul(handle_, plan.desc, &alpha, operands.w, plan.a, operands.x, plan.b, &beta,
                          operands.out, plan.c, operands.out, plan.c, &algo, workspace_,
                          workspace_bytes_, stream_);
  };
  int best = 0;
  float best_ms = INFINITY;
  for (int i = 0; i < n_results; ++i) {
    if (launch(results[i].algo) != CUBLAS_STATUS_SUCCESS) continue;  // warm-up; skip failures
    CUDA_CHECK(cudaEventRecord(start, stream_));
    for (int r = 0; r < 3; ++r) CUBLAS_CHECK(launch(results[i].algo));
    CUDA_CHECK(cudaEventRecord(stop, stream_));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best_ms) {
      best_ms = ms;
      best = i;
    }
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return results[best].algo;
}

void Gemm::run(const void* x, const void* w, const void* bias, void* out, bool out_f32, int64_t m,
               int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  const Key key{m, n, k, out_f32, bias != nullptr, common_alignment({x, w, bias, out})};
  Plan& plan = plan_for(key, {x, w, bias, out});
  if (bias != nullptr)
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof bias));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, plan.desc, &alpha, w, plan.a, x, plan.b, &beta, out, plan.c,
                              out, plan.c, &plan.algo, workspace_, workspace_bytes_, stream_));
}

}  // namespace hadron::cuda
