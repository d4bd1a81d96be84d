// CUDA vs CPU: linear (GEMV path for M <= 8, cuBLASLt above), bf16 and f32 outputs, bias;
// add_rms_norm_linear and silu_mul_linear (the norm or the activation fused into the GEMV, or
// run before cuBLASLt); add_rms_norm_linear_silu (the norm in front of the gate_up GEMV and
// the activation behind it).
#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "op_test_util.h"

namespace hadron::test {
namespace {

class LinearTest : public OpTest {
 protected:
  // A fused GEMV's product over the rows it computed in front: equal bit for bit to the plain
  // GEMV over x_ref (the separate op's rows, x_values on the host), and within the GEMM
  // tolerance of the CPU's product.
  void expect_plain_gemv_product(const std::vector<float>& product, const DeviceTensor& x_ref,
                                 std::vector<float>& x_values, std::vector<float>& w,
                                 const DeviceTensor& w_gpu, std::vector<float>& b,
                                 const DeviceTensor& b_gpu, bool bias, int64_t m, int64_t n,
                                 int64_t k) {
    DeviceTensor out_ref = poisoned({m, n});
    cuda::launch_gemv(x_ref.tensor.data, w_gpu.tensor.data, bias ? b_gpu.tensor.data : nullptr,
                      out_ref.tensor.data, false, m, n, k, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(product, download(out_ref.tensor));
    std::vector<float> expected(m * n);
    cpu_->linear(host_view(x_values, {m, k}), host_view(w, {n, k}),
                 bias ? host_view(b, {n}) : Tensor{}, host_view(expected, {m, n}));
    EXPECT_CLOSE(product, expected, kGemmTol);
  }
};

TEST_F(LinearTest, MatchesCpu) {
  struct Case {
    int64_t m, n, k;
    bool bias;
    DType out;
  };
  for (const Case c :
       {Case{1, 4096, 4096, false, DType::BF16}, Case{1, 1000, 136, true, DType::BF16},
        Case{3, 6144, 4096, false, DType::BF16}, Case{8, 2048, 12288, false, DType::BF16},
        Case{1, 15193, 1024, false, DType::F32}, Case{9, 3000, 520, true, DType::BF16},
        Case{127, 1536, 4096, false, DType::BF16}, Case{256, 1000, 2048, true, DType::F32},
        Case{256, 4096, 4096, false, DType::BF16}}) {
    SCOPED_TRACE(testing::Message() << "M " << c.m << " N " << c.n << " K " << c.k << " bias "
                                    << c.bias << " out " << dtype_name(c.out));
    std::vector<float> x = random_floats(c.m * c.k), w = random_floats(c.n * c.k, 0.05f),
                       bias = random_floats(c.n);
    DeviceTensor x_gpu = upload(x, {c.m, c.k}), w_gpu = upload(w, {c.n, c.k});
    DeviceTensor bias_gpu = upload(bias, {c.n}, c.out);
    DeviceTensor out = poisoned({c.m, c.n}, c.out);
    gpu_->linear(x_gpu.tensor, w_gpu.tensor, c.bias ? bias_gpu.tensor : Tensor{}, out.tensor);
    std::vector<float> expected(c.m * c.n);
    cpu_->linear(host_view(x, {c.m, c.k}), host_view(w, {c.n, c.k}),
                 c.bias ? host_view(bias, {c.n}) : Tensor{}, host_view(expected, {c.m, c.n}));
    EXPECT_CLOSE(download(out.tensor), expected, c.out == DType::F32 ? 1e-4 : kGemmTol);
  }
}

// The GEMV kernel directly: the backend picks it or cuBLASLt per shape by timing, so the
// test above may not reach it.
TEST_F(LinearTest, GemvMatchesCpu) {
  for (const int64_t m : {1, 2, 5, 8})
    for (const auto& [n, k, bias, out_dtype] : {std::tuple{4096, 4096, false, DType::BF16},
                                                {1000, 136, true, DType::F32},
                                                {777, 12288, true, DType::BF16},
                                                {40000, 264, true, DType::F32},
                                                {3, 8, false, DType::BF16}}) {
      SCOPED_TRACE(testing::Message() << "M " << m << " N " << n << " K " << k);
      std::vector<float> x = random_floats(m * k), w = random_floats(n * k, 0.05f),
                         b = random_floats(n);
      DeviceTensor x_gpu = upload(x, {m, k}), w_gpu = upload(w, {n, k}),
                   b_gpu = upload(b, {n}, out_dtype);
      DeviceTensor out = poisoned({m, n}, out_dtype);
      cuda::launch_gemv(x_gpu.tensor.data, w_gpu.tensor.data, bias ? b_gpu.tensor.data : nullptr,
                        out.tensor.data, out_dtype == DType::F32, m, n, k, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<float> expected(m * n);
      cpu_->linear(host_view(x, {m, k}), host_view(w, {n, k}), bias ? host_view(b, {n}) : Tensor{},
                   host_view(expected, {m, n}));
      EXPECT_CLOSE(download(out.tensor), expected, out_dtype == DType::F32 ? 1e-4 : kGemmTol);
    }
}

// The norm GEMVs' arguments over test tensors (eps 1e-6): add is null for a norm without one.
cuda::GemvNormArgs norm_args(const DeviceTensor* add, const DeviceTensor& residual,
                             const DeviceTensor& weight, const DeviceTensor& residual_out,
                             const DeviceTensor& normed) {
  return {add != nullptr ? add->tensor.data : nullptr,
          residual.tensor.data,
          weight.tensor.data,
          residual_out.tensor.data,
          normed.tensor.data,
          1e-6f};
}

// The GEMV with the residual add + RMSNorm fused in front, launched directly (the backend
// takes it only where the plain GEMV beat cuBLASLt): the residual stream and the normed rows
// block 0 writes equal add_rms_norm's bit for bit, the product equals the plain GEMV's over
// those rows bit for bit (same arithmetic, x from shared memory), and the inputs stay.
TEST_F(LinearTest, GemvNormEqualsNormThenGemv) {
  for (const int64_t m : {1, 2, 3, 8})
    for (const auto& [n, k, add, bias] :
         {std::tuple{5120, 4096, true, false},
          {77, 2880, true, true},
          {1000, 136, false, true},
          {2048, 6144, false, false},
          // Two rows that fill the shared-memory budget exactly (47 KB); one row of the budget
          // would be wider than the separate rms_norm reference takes (16384).
          {300, cuda::kGemvStagedMaxBytes / 4, true, false}}) {
      if (m * k * 2 > cuda::kGemvStagedMaxBytes) continue;
      SCOPED_TRACE(testing::Message() << "M " << m << " N " << n << " K " << k << " add " << add);
      std::vector<float> residual = random_floats(m * k), branch = random_floats(m * k, 2.0f),
                         norm_w = random_floats(k, 0.5f), w = random_floats(n * k, 0.05f),
                         b = random_floats(n);
      DeviceTensor res_gpu = upload(residual, {m, k}), add_gpu = upload(branch, {m, k});
      DeviceTensor norm_gpu = upload(norm_w, {k}), w_gpu = upload(w, {n, k});
      DeviceTensor b_gpu = upload(b, {n});
      DeviceTensor res_out = poisoned({m, k}), normed = poisoned({m, k}), out = poisoned({m, n});
      const cuda::GemvNormArgs args =
          norm_args(add ? &add_gpu : nullptr, res_gpu, norm_gpu, res_out, normed);
      cuda::launch_gemv_norm(args, w_gpu.tensor.data, bias ? b_gpu.tensor.data : nullptr,
                             out.tensor.data, m, n, k, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(download(res_gpu.tensor), residual);
      EXPECT_EQ(download(add_gpu.tensor), branch);

      // The separate ops on copies: the residual updated in place, the plain GEMV.
      DeviceTensor res_ref = upload(residual, {m, k}), normed_ref = poisoned({m, k});
      if (add) {
        gpu_->add_rms_norm(add_gpu.tensor, res_ref.tensor, norm_gpu.tensor, 1e-6f,
                           normed_ref.tensor);
        EXPECT_EQ(download(res_out.tensor), download(res_ref.tensor));
      } else {
        gpu_->rms_norm(res_gpu.tensor, norm_gpu.tensor, 1e-6f, normed_ref.tensor);
      }
      std::vector<float> normed_values = download(normed_ref.tensor);
      EXPECT_EQ(download(normed.tensor), normed_values);
      expect_plain_gemv_product(download(out.tensor), normed_ref, normed_values, w, w_gpu, b, b_gpu,
                                bias, m, n, k);
    }
}

// The backend op (fused GEMV or norm then cuBLASLt, whichever the shape gets) against the
// CPU's norm then product.
TEST_F(LinearTest, AddRmsNormLinearMatchesCpu) {
  // 6 x 4096 and 3 x 8192: rows of exactly 48 KB, one launch failure had they been fused.
  for (const auto& [m, n, k, add] : {std::tuple{1, 6144, 4096, true},
                                     {1, 4096, 4096, false},
                                     {6, 4096, 4096, true},
                                     {3, 1024, 8192, true},
                                     {8, 24576, 4096, true},
                                     {9, 3000, 520, true},
                                     {64, 1536, 2048, true}}) {
    SCOPED_TRACE(testing::Message() << "M " << m << " N " << n << " K " << k << " add " << add);
    std::vector<float> residual = random_floats(m * k), branch = random_floats(m * k, 2.0f),
                       norm_w = random_floats(k, 0.5f), w = random_floats(n * k, 0.05f);
    DeviceTensor res_gpu = upload(residual, {m, k}), add_gpu = upload(branch, {m, k});
    DeviceTensor norm_gpu = upload(norm_w, {k}), w_gpu = upload(w, {n, k});
    DeviceTensor res_out = poisoned({m, k}), normed = poisoned({m, k}), out = poisoned({m, n});
    gpu_->add_rms_norm_linear(
        {add ? add_gpu.tensor : Tensor{}, res_gpu.tensor, add ? res_out.tensor : Tensor{},
         norm_gpu.tensor, 1e-6f, normed.tensor},
        w_gpu.tensor, Tensor{}, out.tensor);
    std::vector<float> res_out_cpu(m * k), normed_cpu(m * k), expected(m * n);
    cpu_->add_rms_norm_linear(
        {add ? host_view(branch, {m, k}) : Tensor{}, host_view(residual, {m, k}),
         add ? host_view(res_out_cpu, {m, k}) : Tensor{}, host_view(norm_w, {k}), 1e-6f,
         host_view(normed_cpu, {m, k})},
        host_view(w, {n, k}), Tensor{}, host_view(expected, {m, n}));
    if (add) EXPECT_CLOSE(download(res_out.tensor), res_out_cpu, kElementwiseTol);
    EXPECT_CLOSE(download(normed.tensor), normed_cpu, kElementwiseTol);
    EXPECT_CLOSE(download(out.tensor), expected, kGemmTol);
    EXPECT_EQ(download(res_gpu.tensor), residual);
  }
}

// The GEMV with the norm in front and SiLU-and-mul behind, launched directly: the residual
// stream and normed rows equal add_rms_norm's, and the activations equal the norm GEMV's
// gate_up (a plain row product each) followed by silu_mul, bit for bit.
TEST_F(LinearTest, GemvNormSiluEqualsNormGemvThenSilu) {
  for (const int64_t m : {1, 2, 3, 8})
    for (const auto& [inter, k, add] : {std::tuple{12288, 4096, true},
                                        {768, 2048, true},
                                        {1000, 136, false},
                                        {24, 5120, true},
                                        {40, cuda::kGemvStagedMaxBytes / 4, false}}) {
      if (m * k * 2 > cuda::kGemvStagedMaxBytes) continue;
      SCOPED_TRACE(testing::Message()
                   << "M " << m << " I " << inter << " K " << k << " add " << add);
      std::vector<float> residual = random_floats(m * k), branch = random_floats(m * k, 2.0f),
                         norm_w = random_floats(k, 0.5f), w = random_floats(2 * inter * k, 0.05f);
      DeviceTensor res_gpu = upload(residual, {m, k}), add_gpu = upload(branch, {m, k});
      DeviceTensor norm_gpu = upload(norm_w, {k}), w_gpu = upload(w, {2 * inter, k});
      DeviceTensor res_out = poisoned({m, k}), normed = poisoned({m, k}),
                   activated = poisoned({m, inter});
      const cuda::GemvNormArgs args =
          norm_args(add ? &add_gpu : nullptr, res_gpu, norm_gpu, res_out, normed);
      cuda::launch_gemv_norm_silu(args, w_gpu.tensor.data, activated.tensor.data, m, inter, k,
                                  nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(download(res_gpu.tensor), residual);

      DeviceTensor res_out_ref = poisoned({m, k}), normed_ref = poisoned({m, k}),
                   gate_up_ref = poisoned({m, 2 * inter}), activated_ref = poisoned({m, inter});
      const cuda::GemvNormArgs ref_args =
          norm_args(add ? &add_gpu : nullptr, res_gpu, norm_gpu, res_out_ref, normed_ref);
      cuda::launch_gemv_norm(ref_args, w_gpu.tensor.data, nullptr, gate_up_ref.tensor.data, m,
                             2 * inter, k, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the backend runs on its own stream
      gpu_->silu_mul(gate_up_ref.tensor, activated_ref.tensor);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      if (add) {
        EXPECT_EQ(download(res_out.tensor), download(res_out_ref.tensor));
      }
      EXPECT_EQ(download(normed.tensor), download(normed_ref.tensor));
      EXPECT_EQ(download(activated.tensor), download(activated_ref.tensor));
    }
}

// The backend op (the fused GEMV, or the norm GEMV or cuBLASLt then silu_mul) against the
// CPU's ops.
TEST_F(LinearTest, AddRmsNormLinearSiluMatchesCpu) {
  for (const auto& [m, inter, k] : {std::tuple{1, 12288, 4096},
                                    {4, 768, 2048},
                                    {8, 1000, 136},
                                    {9, 1536, 520},
                                    {64, 1024, 2048}}) {
    SCOPED_TRACE(testing::Message() << "M " << m << " I " << inter << " K " << k);
    std::vector<float> residual = random_floats(m * k), branch = random_floats(m * k, 2.0f),
                       norm_w = random_floats(k, 0.5f), w = random_floats(2 * inter * k, 0.05f);
    DeviceTensor res_gpu = upload(residual, {m, k}), add_gpu = upload(branch, {m, k});
    DeviceTensor norm_gpu = upload(norm_w, {k}), w_gpu = upload(w, {2 * inter, k});
    DeviceTensor res_out = poisoned({m, k}), normed = poisoned({m, k}),
                 gate_up = poisoned({m, 2 * inter}), activated = poisoned({m, inter});
    gpu_->add_rms_norm_linear_silu(
        {add_gpu.tensor, res_gpu.tensor, res_out.tensor, norm_gpu.tensor, 1e-6f, normed.tensor},
        w_gpu.tensor, gate_up.tensor, activated.tensor);
    std::vector<float> res_out_cpu(m * k), normed_cpu(m * k), gate_up_cpu(m * 2 * inter),
        activated_cpu(m * inter);
    cpu_->add_rms_norm_linear_silu(
        {host_view(branch, {m, k}), host_view(residual, {m, k}), host_view(res_out_cpu, {m, k}),
         host_view(norm_w, {k}), 1e-6f, host_view(normed_cpu, {m, k})},
        host_view(w, {2 * inter, k}), host_view(gate_up_cpu, {m, 2 * inter}),
        host_view(activated_cpu, {m, inter}));
    EXPECT_CLOSE(download(res_out.tensor), res_out_cpu, kElementwiseTol);
    EXPECT_CLOSE(download(normed.tensor), normed_cpu, kElementwiseTol);
    // SiLU-and-mul of products that carry the GEMM tolerance.
    EXPECT_CLOSE(download(activated.tensor), activated_cpu, kGemmTol);
  }
}

// The GEMV with SiLU-and-mul fused in front, launched directly: the activated rows block 0
// writes equal silu_mul's bit for bit, the product equals the plain GEMV's over those rows
// bit for bit, and gate_up stays.
TEST_F(LinearTest, GemvSiluEqualsSiluThenGemv) {
  for (const int64_t m : {1, 2, 3, 8})
    for (const auto& [n, k, bias] : {std::tuple{4096, 12288, false},
                                     {2880, 2880, true},
                                     {1000, 136, true},
                                     {301, cuda::kGemvStagedMaxBytes / 4, false}}) {
      if (m * k * 2 > cuda::kGemvStagedMaxBytes) continue;
      SCOPED_TRACE(testing::Message() << "M " << m << " N " << n << " K " << k);
      std::vector<float> gate_up = random_floats(m * 2 * k, 3.0f), w = random_floats(n * k, 0.05f),
                         b = random_floats(n);
      DeviceTensor gate_up_gpu = upload(gate_up, {m, 2 * k}), w_gpu = upload(w, {n, k});
      DeviceTensor b_gpu = upload(b, {n});
      DeviceTensor activated = poisoned({m, k}), out = poisoned({m, n});
      cuda::launch_gemv_silu(gate_up_gpu.tensor.data, activated.tensor.data, w_gpu.tensor.data,
                             bias ? b_gpu.tensor.data : nullptr, out.tensor.data, m, n, k, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(download(gate_up_gpu.tensor), gate_up);  // upload rounded gate_up to bf16

      DeviceTensor activated_ref = poisoned({m, k});
      gpu_->silu_mul(gate_up_gpu.tensor, activated_ref.tensor);
      std::vector<float> activated_values = download(activated_ref.tensor);
      EXPECT_EQ(download(activated.tensor), activated_values);
      expect_plain_gemv_product(download(out.tensor), activated_ref, activated_values, w, w_gpu, b,
                                b_gpu, bias, m, n, k);
    }
}

// The backend op (fused GEMV, or silu_mul then the product) against the CPU's.
TEST_F(LinearTest, SiluMulLinearMatchesCpu) {
  for (const auto& [m, n, k] : {std::tuple{1, 4096, 12288},
                                {2, 2048, 768},
                                {8, 4096, 12288},
                                {9, 3000, 520},
                                {64, 1536, 2048}}) {
    SCOPED_TRACE(testing::Message() << "M " << m << " N " << n << " K " << k);
    std::vector<float> gate_up = random_floats(m * 2 * k, 3.0f), w = random_floats(n * k, 0.05f);
    DeviceTensor gate_up_gpu = upload(gate_up, {m, 2 * k}), w_gpu = upload(w, {n, k});
    DeviceTensor activated = poisoned({m, k}), out = poisoned({m, n});
    gpu_->silu_mul_linear(gate_up_gpu.tensor, activated.tensor, w_gpu.tensor, Tensor{}, out.tensor);
    std::vector<float> activated_cpu(m * k), expected(m * n);
    cpu_->silu_mul_linear(host_view(gate_up, {m, 2 * k}), host_view(activated_cpu, {m, k}),
                          host_view(w, {n, k}), Tensor{}, host_view(expected, {m, n}));
    EXPECT_CLOSE(download(activated.tensor), activated_cpu, kElementwiseTol);
    EXPECT_CLOSE(download(out.tensor), expected, kGemmTol);
  }
}

// Chained GEMVs with no synchronisation between them: each launch may start (and load its
// weights) before the previous one has finished, so this checks that every kernel reads its
// input only after its producer is done (programmatic dependent launch).
TEST_F(LinearTest, GemvChainReadsFinishedInputs) {
  constexpr int64_t kM = 2, kWidth = 2048, kLinks = 4;
  std::vector<float> x = random_floats(kM * kWidth);
  std::vector<std::vector<float>> weights;
  std::vector<DeviceTensor> w_gpu;
  for (int64_t i = 0; i < kLinks; ++i) {
    weights.push_back(random_floats(kWidth * kWidth, 0.03f));
    w_gpu.push_back(upload(weights.back(), {kWidth, kWidth}));
  }
  std::vector<DeviceTensor> acts;
  acts.push_back(upload(x, {kM, kWidth}));
  for (int64_t i = 0; i < kLinks; ++i) acts.push_back(poisoned({kM, kWidth}, DType::BF16));
  for (int64_t i = 0; i < kLinks; ++i)
    cuda::launch_gemv(acts[i].tensor.data, w_gpu[i].tensor.data, nullptr, acts[i + 1].tensor.data,
                      false, kM, kWidth, kWidth, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // The reference feeds each link the GPU's own bf16 input, so rounding does not compound.
  for (int64_t i = 0; i < kLinks; ++i) {
    SCOPED_TRACE(testing::Message() << "link " << i);
    std::vector<float> input = download(acts[i].tensor);
    std::vector<float> expected(kM * kWidth);
    cpu_->linear(host_view(input, {kM, kWidth}), host_view(weights[i], {kWidth, kWidth}), Tensor{},
                 host_view(expected, {kM, kWidth}));
    EXPECT_CLOSE(download(acts[i + 1].tensor), expected, kGemmTol);
  }
}

// The same chain captured into a CUDA graph: stream capture must keep the launches'
// programmatic edges (else graphs silently lose the overlap), and the replay must still see
// finished inputs.
TEST_F(LinearTest, GemvChainKeepsProgrammaticEdgesInGraphs) {
  if (!cuda::pdl_enabled()) GTEST_SKIP() << "HADRON_PDL=0";
  constexpr int64_t kWidth = 1024, kLinks = 3;
  std::vector<float> x = random_floats(kWidth), w = random_floats(kWidth * kWidth, 0.05f);
  DeviceTensor w_gpu = upload(w, {kWidth, kWidth});
  std::vector<DeviceTensor> acts;
  acts.push_back(upload(x, {1, kWidth}));
  for (int64_t i = 0; i < kLinks; ++i) acts.push_back(poisoned({1, kWidth}, DType::BF16));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  for (int64_t i = 0; i < kLinks; ++i)
    cuda::launch_gemv(acts[i].tensor.data, w_gpu.tensor.data, nullptr, acts[i + 1].tensor.data,
                      false, 1, kWidth, kWidth, stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  size_t n_edges = 0;
  ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &n_edges), cudaSuccess);
  std::vector<cudaGraphNode_t> from(n_edges), to(n_edges);
  std::vector<cudaGraphEdgeData> data(n_edges);
  ASSERT_EQ(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &n_edges), cudaSuccess);
  int programmatic = 0;
  for (const cudaGraphEdgeData& edge : data)
    programmatic += edge.type == cudaGraphDependencyTypeProgrammatic;
  EXPECT_EQ(programmatic, kLinks - 1) << n_edges << " edges";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  for (int64_t i = 0; i < kLinks; ++i) {
    std::vector<float> input = download(acts[i].tensor), expected(kWidth);
    cpu_->linear(host_view(input, {1, kWidth}), host_view(w, {kWidth, kWidth}), Tensor{},
                 host_view(expected, {1, kWidth}));
    EXPECT_CLOSE(download(acts[i + 1].tensor), expected, kGemmTol);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace hadron::test
