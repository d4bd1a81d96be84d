// CUDA vs CPU: linear (the GEMV path for M <= 2, the wgmma decode GEMM for 3-64 rows, cuBLASLt
// above), bf16 and f32 outputs, bias; add_rms_norm_linear and silu_mul_linear (the norm or the
// activation fused into the GEMV, or run before the product); add_rms_norm_linear_silu (the
// norm in front of the gate_up GEMV and the activation behind it, or the decode GEMM with the
// activation in its epilogue); qkv_projection (the decode GEMM with qkv_rope_store's
// arithmetic in its epilogue).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>

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

// The wgmma decode GEMM directly (the backend takes it for 3-64 rows), at every k split a
// shape allows: one tile of one k block first, then row counts inside and at the edges of its
// 16/32/64 token tiles, n not a multiple of the 128-row weight tile, k not a multiple of the
// 64-wide k block, one tile (many splits) and many (one split). The first differing elements
// of an [m, n] product, for a failure message (a layout mistake shows as a pattern:
// transposed, rows shifted, one k block missing).
std::string first_differences(const std::vector<float>& actual, const std::vector<float>& expected,
                              int64_t n) {
  std::string text;
  int shown = 0;
  for (size_t i = 0; i < actual.size() && shown < 8; ++i) {
    if (std::abs(actual[i] - expected[i]) <= 0.02f * (1.0f + std::abs(expected[i]))) continue;
    text += fmt::format("[{},{}] {} vs {}; ", i / n, i % n, actual[i], expected[i]);
    ++shown;
  }
  return text;
}

TEST_F(LinearTest, DecodeGemmMatchesCpu) {
  struct Case {
    int64_t m, n, k;
    bool bias;
    DType out;
  };
  for (const Case c :
       {Case{16, 128, 64, false, DType::F32}, Case{9, 4096, 4096, false, DType::BF16},
        Case{16, 1000, 136, true, DType::F32}, Case{17, 6144, 512, false, DType::BF16},
        Case{32, 2048, 1000, true, DType::BF16}, Case{24, 128, 4096, false, DType::F32},
        Case{25, 24576, 256, true, DType::BF16}, Case{32, 4096, 12288, false, DType::BF16},
        Case{31, 16384, 264, true, DType::F32}, Case{3, 256, 64, false, DType::BF16},
        Case{33, 2048, 1000, true, DType::BF16}, Case{64, 640, 4096, false, DType::F32},
        Case{57, 24576, 256, true, DType::BF16}, Case{64, 4096, 12288, false, DType::BF16},
        Case{5, 4096, 4096, true, DType::BF16}, Case{8, 16384, 264, true, DType::F32}}) {
    std::vector<float> x = random_floats(c.m * c.k), w = random_floats(c.n * c.k, 0.05f),
                       b = random_floats(c.n);
    DeviceTensor x_gpu = upload(x, {c.m, c.k}), w_gpu = upload(w, {c.n, c.k}),
                 b_gpu = upload(b, {c.n}, c.out);
    std::vector<float> expected(c.m * c.n);
    cpu_->linear(host_view(x, {c.m, c.k}), host_view(w, {c.n, c.k}),
                 c.bias ? host_view(b, {c.n}) : Tensor{}, host_view(expected, {c.m, c.n}));
    const int64_t k_blocks = (c.k + 63) / 64;
    for (const int splits : {0, 1, 2, 3, 4, 8}) {
      if (splits > k_blocks) continue;
      SCOPED_TRACE(testing::Message()
                   << "M " << c.m << " N " << c.n << " K " << c.k << " bias " << c.bias << " out "
                   << dtype_name(c.out) << " splits " << splits);
      DeviceTensor out = poisoned({c.m, c.n}, c.out);
      cuda::launch_decode_gemm(x_gpu.tensor.data, w_gpu.tensor.data,
                               c.bias ? b_gpu.tensor.data : nullptr, out.tensor.data,
                               c.out == DType::F32, c.m, c.n, c.k, splits, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const std::vector<float> actual = download(out.tensor);
      EXPECT_LE(relative_error(actual, expected), c.out == DType::F32 ? 1e-4 : kGemmTol)
          << first_differences(actual, expected, c.n);
    }
  }
}

// The decode GEMM with qkv_rope_store's arithmetic behind it: q_out and both caches equal the
// plain decode GEMM (bf16 qkv) then qkv_rope_store bit for bit, at every split; a padding token
// (slot -1) writes its q only.
TEST_F(LinearTest, DecodeGemmQkvRopeEqualsGemmThenQkvRopeStore) {
  constexpr int64_t kMaxPos = 512, kBlockSize = 16, kBlocks = 16, kHeadDim = 128;
  for (const auto& [m, nq, nkv, k, rotary, norms, bias, neox] :
       {std::tuple{9, 32, 8, 4096, 128, true, false, true},
        {32, 16, 4, 1024, 64, false, true, true},
        {20, 4, 4, 520, 128, true, true, false},
        {64, 16, 4, 1024, 64, false, true, true},
        {41, 5, 1, 520, 128, true, true, false},
        {3, 8, 2, 4096, 128, true, false, true}}) {
    const int64_t n = (nq + 2 * nkv) * kHeadDim;
    const std::vector<int64_t> cache_shape{kBlocks, kBlockSize, nkv, kHeadDim};
    std::vector<float> x = random_floats(m * k), w = random_floats(n * k, 0.05f),
                       b = random_floats(n), q_norm = random_floats(kHeadDim),
                       k_norm = random_floats(kHeadDim), table = random_floats(kMaxPos * rotary),
                       cache = random_floats(kBlocks * kBlockSize * nkv * kHeadDim);
    std::vector<int32_t> positions = random_ints(m, 0, kMaxPos - 1);
    std::vector<int32_t> slots(kBlocks * kBlockSize);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng_);
    slots.resize(m);
    slots[1] = -1;
    DeviceTensor x_gpu = upload(x, {m, k}), w_gpu = upload(w, {n, k}), b_gpu = upload(b, {n});
    DeviceTensor qn_gpu = upload(q_norm, {kHeadDim}), kn_gpu = upload(k_norm, {kHeadDim});
    DeviceTensor table_gpu = upload(table, {kMaxPos, rotary}, DType::F32);
    DeviceTensor pos_gpu = upload_i32(positions, {m}), slots_gpu = upload_i32(slots, {m});
    const void* bias_data = bias ? b_gpu.tensor.data : nullptr;
    const int64_t k_blocks = (k + 63) / 64;
    for (const int splits : {1, 2, 3, 4, 0}) {
      if (splits > k_blocks) continue;
      SCOPED_TRACE(testing::Message() << "M " << m << " heads " << nq << "/" << nkv << " K " << k
                                      << " rotary " << rotary << " splits " << splits);
      // The same starting caches for both paths; rows no token writes must stay as they were.
      std::array<DeviceTensor, 2> k_cache{upload(cache, cache_shape), upload(cache, cache_shape)},
          v_cache{upload(cache, cache_shape), upload(cache, cache_shape)},
          q_out{poisoned({m, nq, kHeadDim}), poisoned({m, nq, kHeadDim})};
      std::array<cuda::QkvRopeStoreArgs, 2> args;
      for (int i = 0; i < 2; ++i)
        args[i] = {nullptr,
                   norms ? qn_gpu.tensor.data : nullptr,
                   norms ? kn_gpu.tensor.data : nullptr,
                   pos_gpu.tensor.ptr<int32_t>(),
                   table_gpu.tensor.ptr<float>(),
                   slots_gpu.tensor.ptr<int32_t>(),
                   k_cache[i].tensor.data,
                   v_cache[i].tensor.data,
                   q_out[i].tensor.data,
                   m,
                   nq,
                   nkv,
                   kHeadDim,
                   rotary,
                   1e-6f,
                   neox};
      cuda::launch_decode_gemm_qkv_rope(x_gpu.tensor.data, w_gpu.tensor.data, bias_data, args[0], k,
                                        splits, nullptr);
      DeviceTensor qkv = poisoned({m, n});
      cuda::launch_decode_gemm(x_gpu.tensor.data, w_gpu.tensor.data, bias_data, qkv.tensor.data,
                               false, m, n, k, splits, nullptr);
      args[1].qkv = qkv.tensor.data;
      cuda::launch_qkv_rope_store(args[1], nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(download(q_out[0].tensor), download(q_out[1].tensor));
      EXPECT_EQ(download(k_cache[0].tensor), download(k_cache[1].tensor));
      EXPECT_EQ(download(v_cache[0].tensor), download(v_cache[1].tensor));
    }
  }
}

// The decode GEMM with SiLU-and-mul in its epilogue: equal bit for bit to the plain decode GEMM
// into a bf16 gate_up, then silu_mul, at every split (intermediates that end part way through
// a 64-row tile included).
TEST_F(LinearTest, DecodeGemmSiluEqualsGemmThenSiluMul) {
  for (const auto& [m, inter, k] : {std::tuple{3, 200, 520},
                                    {16, 12288, 4096},
                                    {33, 768, 2048},
                                    {64, 1000, 136},
                                    {8, 64, 64},
                                    {47, 1536, 1000}}) {
    std::vector<float> x = random_floats(m * k), w = random_floats(2 * inter * k, 0.05f);
    DeviceTensor x_gpu = upload(x, {m, k}), w_gpu = upload(w, {2 * inter, k});
    const int64_t k_blocks = (k + 63) / 64;
    for (const int splits : {1, 2, 3, 8, 0}) {
      if (splits > k_blocks) continue;
      SCOPED_TRACE(testing::Message()
                   << "M " << m << " I " << inter << " K " << k << " splits " << splits);
      DeviceTensor activated = poisoned({m, inter}), gate_up = poisoned({m, 2 * inter}),
                   activated_ref = poisoned({m, inter});
      cuda::launch_decode_gemm_silu(x_gpu.tensor.data, w_gpu.tensor.data, activated.tensor.data, m,
                                    inter, k, splits, nullptr);
      cuda::launch_decode_gemm(x_gpu.tensor.data, w_gpu.tensor.data, nullptr, gate_up.tensor.data,
                               false, m, 2 * inter, k, splits, nullptr);
      cuda::launch_silu_mul(gate_up.tensor.data, activated_ref.tensor.data, m, inter, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(download(activated.tensor), download(activated_ref.tensor));
    }
  }
}

// The backend op from the input norm to the cache writes against the CPU's: through the GEMV
// and qkv_rope_store (1 row), the decode GEMM with qkv_rope_store in its epilogue (4-64 rows)
// and cuBLASLt (80 rows).
TEST_F(LinearTest, QkvProjectionMatchesCpu) {
  constexpr int64_t kMaxPos = 512, kBlockSize = 16, kBlocks = 16, kHeadDim = 128, kNq = 16,
                    kNkv = 4, kK = 1024;
  constexpr int64_t kN = (kNq + 2 * kNkv) * kHeadDim, kTokenElems = kNkv * kHeadDim;
  const std::vector<int64_t> cache_shape{kBlocks, kBlockSize, kNkv, kHeadDim};
  for (const auto& [m, bias] :
       {std::pair{1, false}, {4, true}, {16, true}, {32, false}, {64, true}, {80, false}}) {
    SCOPED_TRACE(testing::Message() << "M " << m << " bias " << bias);
    std::vector<float> residual = random_floats(m * kK), branch = random_floats(m * kK, 2.0f),
                       norm_w = random_floats(kK, 0.5f), w = random_floats(kN * kK, 0.05f),
                       b = random_floats(kN), q_norm = random_floats(kHeadDim),
                       k_norm = random_floats(kHeadDim), table = random_floats(kMaxPos * kHeadDim),
                       k_cache = random_floats(kBlocks * kBlockSize * kTokenElems),
                       v_cache = k_cache;
    std::vector<int32_t> positions = random_ints(m, 0, kMaxPos - 1);
    std::vector<int32_t> slots(kBlocks * kBlockSize);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng_);
    slots.resize(m);
    DeviceTensor res_gpu = upload(residual, {m, kK}), add_gpu = upload(branch, {m, kK});
    DeviceTensor norm_gpu = upload(norm_w, {kK}), w_gpu = upload(w, {kN, kK}),
                 b_gpu = upload(b, {kN});
    DeviceTensor qn_gpu = upload(q_norm, {kHeadDim}), kn_gpu = upload(k_norm, {kHeadDim});
    DeviceTensor table_gpu = upload(table, {kMaxPos, kHeadDim}, DType::F32);
    DeviceTensor kc_gpu = upload(k_cache, cache_shape), vc_gpu = upload(v_cache, cache_shape);
    DeviceTensor pos_gpu = upload_i32(positions, {m}), slots_gpu = upload_i32(slots, {m});
    DeviceTensor res_out = poisoned({m, kK}), normed = poisoned({m, kK}), qkv = poisoned({m, kN}),
                 q_out = poisoned({m, kNq, kHeadDim});
    const QkvParams params{kNq, kNkv, kHeadDim, 1e-6f, RopeStyle::kNeox};
    gpu_->qkv_projection(
        {add_gpu.tensor, res_gpu.tensor, res_out.tensor, norm_gpu.tensor, 1e-6f, normed.tensor},
        w_gpu.tensor, bias ? b_gpu.tensor : Tensor{}, qkv.tensor, qn_gpu.tensor, kn_gpu.tensor,
        pos_gpu.tensor, table_gpu.tensor, params, kc_gpu.tensor, vc_gpu.tensor, slots_gpu.tensor,
        q_out.tensor);
    std::vector<float> res_out_cpu(m * kK), normed_cpu(m * kK), qkv_cpu(m * kN),
        q_cpu(m * kNq * kHeadDim), k_cache_cpu = k_cache, v_cache_cpu = v_cache;
    cpu_->qkv_projection(
        {host_view(branch, {m, kK}), host_view(residual, {m, kK}), host_view(res_out_cpu, {m, kK}),
         host_view(norm_w, {kK}), 1e-6f, host_view(normed_cpu, {m, kK})},
        host_view(w, {kN, kK}), bias ? host_view(b, {kN}) : Tensor{}, host_view(qkv_cpu, {m, kN}),
        host_view(q_norm, {kHeadDim}), host_view(k_norm, {kHeadDim}), host_view_i32(positions, {m}),
        host_view(table, {kMaxPos, kHeadDim}), params, host_view(k_cache_cpu, cache_shape),
        host_view(v_cache_cpu, cache_shape), host_view_i32(slots, {m}),
        host_view(q_cpu, {m, kNq, kHeadDim}));
    EXPECT_CLOSE(download(res_out.tensor), res_out_cpu, kElementwiseTol);
    EXPECT_CLOSE(download(q_out.tensor), q_cpu, kGemmTol);
    const std::vector<float> k_gpu = download(kc_gpu.tensor), v_gpu = download(vc_gpu.tensor);
    EXPECT_CLOSE(slot_rows(k_gpu, slots, kTokenElems), slot_rows(k_cache_cpu, slots, kTokenElems),
                 kGemmTol);
    EXPECT_CLOSE(slot_rows(v_gpu, slots, kTokenElems), slot_rows(v_cache_cpu, slots, kTokenElems),
                 kGemmTol);
    // Rows no token writes stay as they were.
    std::vector<int32_t> others;
    for (int32_t slot = 0; slot < kBlocks * kBlockSize; ++slot)
      if (std::find(slots.begin(), slots.end(), slot) == slots.end()) others.push_back(slot);
    EXPECT_EQ(slot_rows(k_gpu, others, kTokenElems), slot_rows(k_cache, others, kTokenElems));
    EXPECT_EQ(slot_rows(v_gpu, others, kTokenElems), slot_rows(v_cache, others, kTokenElems));
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

// The backend op (the fused GEMV, the norm then the decode GEMM with SiLU-and-mul behind it,
// or the norm GEMV or cuBLASLt then silu_mul) against the CPU's ops.
TEST_F(LinearTest, AddRmsNormLinearSiluMatchesCpu) {
  for (const auto& [m, inter, k] : {std::tuple{1, 12288, 4096},
                                    {4, 768, 2048},
                                    {8, 1000, 136},
                                    {9, 1536, 520},
                                    {64, 1024, 2048},
                                    {80, 768, 2048}}) {
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
