// CUDA vs CPU: the FP8 linear's ops (ops/backend.h; ADR 0014). quantize_fp8_per_token_group on
// bf16 activations (groups of 128 and per token, ue8m0 or not) and fp8_linear on the same codes
// and scales at block-scaled, per-channel and per-tensor layouts, with k, n and T not multiples
// of 128. (The CUDA kernels of fp8_linear.cu are plain baselines; not yet run on a GPU when
// this test was written.)
#include <algorithm>
#include <cmath>

#include "op_test_util.h"

namespace hadron::test {
namespace {

class Fp8Test : public OpTest {
 protected:
  // Bytes uploaded as dtype (F8_E4M3 codes).
  DeviceTensor upload_bytes(std::vector<uint8_t>& bytes, std::vector<int64_t> shape, DType dtype) {
    DeviceTensor result;
    result.buffer = gpu_->allocate(bytes.size());
    result.tensor = Tensor::view_of(result.buffer.data(), dtype, shape, Device::CUDA);
    gpu_->copy(Tensor::view_of(bytes.data(), dtype, shape), result.tensor);
    return result;
  }
  std::vector<uint8_t> download_bytes(const Tensor& t) {
    std::vector<uint8_t> bytes(t.nbytes());
    gpu_->copy(t, Tensor::view_of(bytes.data(), t.dtype, {t.numel()}));
    return bytes;
  }
};

TEST_F(Fp8Test, QuantizeMatchesCpu) {
  for (const auto& [t, k, group, ue8m0] : {std::tuple{1, 4096, 128, false},
                                           {7, 300, 128, true},
                                           {70, 1000, 1000, false},
                                           {3, 136, 136, true}}) {
    SCOPED_TRACE(testing::Message() << "T " << t << " K " << k << " group " << group);
    std::vector<float> x = random_floats(t * k, 3.0f);
    const int64_t groups = (k + group - 1) / group;
    DeviceTensor x_gpu = upload(x, {t, k});  // rounds x to bf16 for the CPU too
    std::vector<uint8_t> poison(t * k, 0xff);
    DeviceTensor codes = upload_bytes(poison, {t, k}, DType::F8_E4M3);
    DeviceTensor scales = poisoned({t, groups}, DType::F32);
    gpu_->quantize_fp8_per_token_group(x_gpu.tensor, ue8m0, {codes.tensor, scales.tensor, group});
    std::vector<uint8_t> want_codes(t * k);
    std::vector<float> want_scales(t * groups);
    cpu_->quantize_fp8_per_token_group(host_view(x, {t, k}), ue8m0,
                                       {Tensor::view_of(want_codes.data(), DType::F8_E4M3, {t, k}),
                                        host_view(want_scales, {t, groups}), group});
    EXPECT_CLOSE(download(scales.tensor), want_scales, 1e-6);
    // x / s may land on the other side of a rounding midpoint when a kernel multiplies by 1 / s:
    // codes may differ by one step (2^-3 relative, 2^-9 among subnormals), never more.
    const std::vector<uint8_t> got = download_bytes(codes.tensor);
    int64_t far = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const float a = fp8_e4m3_to_f32(got[i]), b = fp8_e4m3_to_f32(want_codes[i]);
      far += !(std::fabs(a - b) <= std::max(std::fabs(a), std::fabs(b)) / 8 + 0x1p-9f);
    }
    EXPECT_EQ(far, 0) << "codes more than one step from the CPU's";
  }
}

TEST_F(Fp8Test, LinearMatchesCpu) {
  struct Case {
    int64_t t, n, k, group, block_n, block_k;
    DType out;
  };
  for (const Case c :
       {Case{1, 4096, 4096, 128, 128, 128, DType::BF16},
        Case{5, 1000, 300, 128, 128, 128, DType::BF16},
        Case{64, 768, 520, 520, 1, 520, DType::BF16}, Case{130, 256, 384, 128, 1, 384, DType::F32},
        Case{3, 200, 136, 136, 200, 136, DType::BF16}}) {
    SCOPED_TRACE(testing::Message() << "T " << c.t << " N " << c.n << " K " << c.k << " blocks "
                                    << c.block_n << " x " << c.block_k);
    std::vector<float> x = random_floats(c.t * c.k), w = random_floats(c.n * c.k, 0.05f);
    const int64_t x_groups = (c.k + c.group - 1) / c.group;
    const int64_t s_rows = (c.n + c.block_n - 1) / c.block_n,
                  s_cols = (c.k + c.block_k - 1) / c.block_k;
    // Codes and scales made on the CPU: weights quantized per row and group of block_k columns,
    // then each block of block_n rows given its first row's scales (any scales would do: both
    // backends multiply the same codes by the same scales).
    std::vector<uint8_t> xq(c.t * c.k), wq(c.n * c.k);
    std::vector<float> xs(c.t * x_groups), ws_rows(c.n * s_cols), ws(s_rows * s_cols);
    cpu_->quantize_fp8_per_token_group(host_view(x, {c.t, c.k}), false,
                                       {Tensor::view_of(xq.data(), DType::F8_E4M3, {c.t, c.k}),
                                        host_view(xs, {c.t, x_groups}), c.group});
    cpu_->quantize_fp8_per_token_group(host_view(w, {c.n, c.k}), false,
                                       {Tensor::view_of(wq.data(), DType::F8_E4M3, {c.n, c.k}),
                                        host_view(ws_rows, {c.n, s_cols}), c.block_k});
    for (int64_t r = 0; r < s_rows; ++r)
      for (int64_t j = 0; j < s_cols; ++j) ws[r * s_cols + j] = ws_rows[r * c.block_n * s_cols + j];
    const Fp8Activations x_cpu{Tensor::view_of(xq.data(), DType::F8_E4M3, {c.t, c.k}),
                               host_view(xs, {c.t, x_groups}), c.group};
    const Fp8Weight w_cpu{Tensor::view_of(wq.data(), DType::F8_E4M3, {c.n, c.k}),
                          host_view(ws, {s_rows, s_cols}), c.block_n, c.block_k};
    std::vector<float> expected(c.t * c.n);
    cpu_->fp8_linear(x_cpu, w_cpu, Tensor{}, host_view(expected, {c.t, c.n}));
    DeviceTensor xq_gpu = upload_bytes(xq, {c.t, c.k}, DType::F8_E4M3);
    DeviceTensor wq_gpu = upload_bytes(wq, {c.n, c.k}, DType::F8_E4M3);
    DeviceTensor xs_gpu = upload(xs, {c.t, x_groups}, DType::F32);
    DeviceTensor ws_gpu = upload(ws, {s_rows, s_cols}, DType::F32);
    DeviceTensor out = poisoned({c.t, c.n}, c.out);
    gpu_->fp8_linear({xq_gpu.tensor, xs_gpu.tensor, c.group},
                     {wq_gpu.tensor, ws_gpu.tensor, c.block_n, c.block_k}, Tensor{}, out.tensor);
    EXPECT_CLOSE(download(out.tensor), expected, kGemmTol);
  }
}

}  // namespace
}  // namespace hadron::test
