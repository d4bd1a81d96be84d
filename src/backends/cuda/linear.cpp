// CudaBackend::linear: for kDecodeGemmMinRows to kDecodeGemmMaxRows rows the wgmma decode GEMM
// (decode_gemm.cu), untimed: alone after an L2 flush it can lose a few us to cuBLASLt, but
// inside a step, where PDL overlaps its start with the kernel before and lets the kernel after
// start early, it beats the timed choice at every size of that range and loses at 2 and 128
// rows (docs/performance-notes.md, "Decode GEMM"). Below: the GEMV kernel when it was faster
// than cuBLASLt on that shape (one row: with a credit for what a step hides, see prefer_gemv;
// timed with events the first time a shape is seen, outside stream capture so graphs replay a
// decided path, and cached); above: cuBLASLt.
// add_rms_norm_linear and silu_mul_linear: the GEMV with the norm or the activation inside it
// (gemv_norm.cu, gemv_silu.cu), timed against that kernel followed by cuBLASLt, so the
// kernel the fusion saves counts in the choice. add_rms_norm_linear_silu: the GEMV with the
// norm in front and SiLU-and-mul behind (gemv_norm_silu.cu), timed against the two ops; for
// the decode GEMM's rows, the norm kernel then the decode GEMM with SiLU-and-mul in its
// epilogue. qkv_projection: for the decode GEMM's rows, the norm kernel then the decode GEMM
// with qkv_rope_store's arithmetic in its epilogue. HADRON_LOG_GEMV_CHOICE=1 prints each decision
// with its timings (stderr).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <initializer_list>

#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/kernels.h"

namespace hadron::cuda {

template <typename Gemv, typename Gemm>
bool CudaBackend::prefer_gemv(GemvKind kind, int64_t m, int64_t n, int64_t k, bool out_f32,
                              const Gemv& gemv, const Gemm& gemm) {
  const auto key = std::tuple{kind, m, n, k, out_f32};
  if (auto it = gemv_choice_.find(key); it != gemv_choice_.end()) return it->second;
  cudaStreamCaptureStatus capture;
  CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
  if (capture != cudaStreamCaptureStatusNone) return false;  // undecided: cuBLASLt
  // Each candidate launched alone after an L2 flush, as a decode step meets its weights (a
  // weight that fits in L2, such as Qwen3-8B's o_proj, times faster warm than it runs in a
  // step), in alternating rounds so that a clock still ramping up weighs on both; each keeps
  // its median round.
  constexpr int kRounds = 5;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  auto time_ms = [&](const auto& launch) {
    launch_l2_flush(l2_flush_.data(), l2_flush_.bytes(), n_sms_, stream_);
    CUDA_CHECK(cudaEventRecord(start, stream_));
    launch();
    CUDA_CHECK(cudaEventRecord(stop, stream_));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  };
  gemv();  // warm-up (module load)
  gemm();  // warm-up (plan creation, module load)
  std::array<float, kRounds> gemv_rounds, gemm_rounds;
  for (int round = 0; round < kRounds; ++round) {
    gemv_rounds[round] = time_ms(gemv);
    gemm_rounds[round] = time_ms(gemm);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  const auto median = [](std::array<float, kRounds>& v) {
    std::nth_element(v.begin(), v.begin() + kRounds / 2, v.end());
    return v[kRounds / 2];
  };
  // A one-row GEMV is credited kOneRowGemvCreditMs: in a step it loads its weights before its
  // pdl_wait and asks L2 for its second step's right after, while a cuBLASLt kernel starts only
  // once the kernel before it has finished, none of which the lone launches above see. Without
  // it a near tie flipped to cuBLASLt in some processes, which then decoded 5% slower; two rows
  // get no credit, which measured slower there (docs/performance-notes.md, "Measuring").
  constexpr float kOneRowGemvCreditMs = 3e-3f;
  const float gemv_ms = median(gemv_rounds), gemm_ms = median(gemm_rounds);
  const float credit_ms = m == 1 ? kOneRowGemvCreditMs : 0.0f;
  const bool take_gemv = gemv_ms - credit_ms < gemm_ms;
  static const bool log_choices = env_flag_set("HADRON_LOG_GEMV_CHOICE");
  if (log_choices) {
    static constexpr const char* kKindNames[] = {"plain", "norm", "silu_mul", "norm_silu"};
    static_assert(static_cast<int>(GemvKind::kNormSilu) == 3, "kKindNames in GemvKind's order");
    std::fprintf(stderr,
                 "gemv choice: %s m=%lld n=%lld k=%lld%s: GEMV %.1f us (credited %.1f), cuBLASLt "
                 "%.1f us -> %s\n",
                 kKindNames[static_cast<int>(kind)], static_cast<long long>(m),
                 static_cast<long long>(n), static_cast<long long>(k), out_f32 ? " f32" : "",
                 1e3f * gemv_ms, 1e3f * credit_ms, 1e3f * gemm_ms, take_gemv ? "GEMV" : "cuBLASLt");
  }
  return gemv_choice_[key] = take_gemv;
}

namespace {

// Validates linear's operands; returns the bias pointer (null when undefined).
const void* check_linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const Tensor& out) {
  check_tensor(x, DType::BF16, "linear x");
  check_tensor(weight, DType::BF16, "linear weight");
  HADRON_CHECK(on_gpu(out) && (out.dtype == DType::BF16 || out.dtype == DType::F32),
               "linear out must be BF16 or F32 on the GPU, got {}", out.describe());
  const int64_t m = x.numel() / x.size(-1), k = x.size(-1), n = weight.size(0);
  HADRON_CHECK(weight.ndim == 2 && weight.size(1) == k && out.numel() == m * n &&
                   out.size(-1) == n && k % 8 == 0,
               "linear {} x {}^T into {}", x.describe(), weight.describe(), out.describe());
  if (bias.defined()) {
    check_tensor(bias, out.dtype, "linear bias (in out's dtype)");
    HADRON_CHECK(bias.numel() == n, "bias {} for {} outputs", bias.describe(), n);
  }
  return bias.defined() ? bias.data : nullptr;
}

// Validates an AddRmsNorm (out of place, shapes and dtypes) and returns the fused GEMV's view
// of it.
GemvNormArgs checked_gemv_norm_args(const AddRmsNorm& norm) {
  check_out_of_place(norm);
  const bool add = norm.add.defined();
  check_rms_norm(add ? norm.add : norm.residual, add ? norm.residual : Tensor{},
                 add ? norm.residual_out : Tensor{}, norm.weight, norm.normed);
  return {add ? norm.add.data : nullptr,          norm.residual.data, norm.weight.data,
          add ? norm.residual_out.data : nullptr, norm.normed.data,   norm.eps};
}

// add + RMSNorm of `norm` over m rows of k (out of place, so it may be repeated).
void launch_add_rms_norm(const AddRmsNorm& norm, int64_t m, int64_t k, cudaStream_t stream) {
  const bool add = norm.add.defined();
  launch_rms_norm(add ? norm.add.data : norm.residual.data, add ? norm.residual.data : nullptr,
                  add ? norm.residual_out.data : nullptr, norm.weight.data, norm.normed.data, m, k,
                  norm.eps, stream);
}

// Whether the wgmma decode GEMM takes a product of m rows (HADRON_DECODE_GEMM=0: never):
// kDecodeGemmMinRows to kDecodeGemmMaxRows rows, n and k multiples of 8, every operand
// 16-byte aligned. The GEMV and its fused forms are considered only where it does not.
bool decode_gemm_fits(int64_t m, int64_t n, int64_t k, std::initializer_list<const void*> data) {
  static const bool on = env_switch_on("HADRON_DECODE_GEMM");
  uintptr_t bits = 0;
  for (const void* p : data) bits |= reinterpret_cast<uintptr_t>(p);
  return on && m >= kDecodeGemmMinRows && m <= kDecodeGemmMaxRows && n % 8 == 0 && k % 8 == 0 &&
         bits % 16 == 0;
}

}  // namespace

void CudaBackend::linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const Tensor& out) {
  const void* bias_ptr = check_linear(x, weight, bias, out);
  const int64_t m = x.numel() / x.size(-1), k = x.size(-1), n = weight.size(0);
  const bool out_f32 = out.dtype == DType::F32;
  const auto gemv = [&] {
    launch_gemv(x.data, weight.data, bias_ptr, out.data, out_f32, m, n, k, stream_);
  };
  const auto gemm = [&] { gemm_->run(x.data, weight.data, bias_ptr, out.data, out_f32, m, n, k); };
  if (decode_gemm_fits(m, n, k, {x.data, weight.data, out.data}))
    launch_decode_gemm(x.data, weight.data, bias_ptr, out.data, out_f32, m, n, k, 0, stream_);
  else if (m <= kGemvMaxRows && prefer_gemv(GemvKind::kPlain, m, n, k, out_f32, gemv, gemm))
    gemv();
  else
    gemm();
}

template <typename Fused, typename First>
void CudaBackend::fused_or_linear(GemvKind kind, const Fused& fused, const First& first,
                                  const Tensor& x, const Tensor& weight, const Tensor& bias,
                                  const Tensor& out) {
  const int64_t k = x.size(-1), m = x.numel() / k, n = weight.size(0);
  const void* bias_ptr = bias.defined() ? bias.data : nullptr;
  const auto separate = [&] {
    first();
    gemm_->run(x.data, weight.data, bias_ptr, out.data, false, m, n, k);
  };
  if (m <= kGemvMaxRows && m * k * 2 <= kGemvStagedMaxBytes && out.dtype == DType::BF16 &&
      !decode_gemm_fits(m, n, k, {x.data, weight.data, out.data}) &&
      prefer_gemv(kind, m, n, k, false, fused, separate)) {
    fused();
    return;
  }
  first();
  linear(x, weight, bias, out);
}

void CudaBackend::add_rms_norm_linear(const AddRmsNorm& norm, const Tensor& weight,
                                      const Tensor& bias, const Tensor& out) {
  const GemvNormArgs args = checked_gemv_norm_args(norm);
  const void* bias_ptr = check_linear(norm.normed, weight, bias, out);
  const int64_t k = norm.normed.size(-1), m = norm.normed.numel() / k, n = weight.size(0);
  // Either path writes residual_out and normed from the inputs alone (out of place), so the
  // timing runs may repeat them.
  const auto fused = [&] {
    launch_gemv_norm(args, weight.data, bias_ptr, out.data, m, n, k, stream_);
  };
  const auto norm_kernel = [&] { launch_add_rms_norm(norm, m, k, stream_); };
  fused_or_linear(GemvKind::kNorm, fused, norm_kernel, norm.normed, weight, bias, out);
}

void CudaBackend::add_rms_norm_linear_silu(const AddRmsNorm& norm, const Tensor& weight,
                                           const Tensor& gate_up, const Tensor& activated) {
  const GemvNormArgs args = checked_gemv_norm_args(norm);
  check_silu_mul(gate_up, activated);
  check_linear(norm.normed, weight, Tensor{}, gate_up);
  const int64_t k = norm.normed.size(-1), m = norm.normed.numel() / k, n = weight.size(0);
  const auto separate = [&] {
    Backend::add_rms_norm_linear_silu(norm, weight, gate_up, activated);
  };
  if (decode_gemm_fits(m, n, k, {norm.normed.data, weight.data, activated.data})) {
    // The decode GEMM with SiLU-and-mul in its epilogue (gate_up unwritten).
    launch_add_rms_norm(norm, m, k, stream_);
    launch_decode_gemm_silu(norm.normed.data, weight.data, activated.data, m, n / 2, k, 0, stream_);
    return;
  }
  if (m <= kGemvMaxRows && m * k * 2 <= kGemvStagedMaxBytes) {
    // Like add_rms_norm_linear's, the fused kernel reads only the inputs, so timing may
    // repeat it; it leaves gate_up unwritten.
    const auto fused = [&] {
      launch_gemv_norm_silu(args, weight.data, activated.data, m, n / 2, k, stream_);
    };
    if (prefer_gemv(GemvKind::kNormSilu, m, n, k, false, fused, separate)) {
      fused();
      return;
    }
  }
  separate();
}

void CudaBackend::qkv_projection(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                                 const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                                 const Tensor& positions, const Tensor& cos_sin,
                                 const QkvParams& params, const Tensor& k_cache,
                                 const Tensor& v_cache, const Tensor& slot_mapping,
                                 const Tensor& q_out) {
  checked_gemv_norm_args(norm);  // normed's shape is read below
  const int64_t k = norm.normed.size(-1), m = norm.normed.numel() / k, n = weight.size(0);
  if (params.head_dim == 128 && qkv.dtype == DType::BF16 &&
      decode_gemm_fits(m, n, k, {norm.normed.data, weight.data})) {
    // The qkv product handed straight to the norm + RoPE + cache writes (qkv unwritten). The
    // separate ops below check their own operands.
    const void* bias_ptr = check_linear(norm.normed, weight, bias, qkv);
    const QkvRopeStoreArgs args = checked_qkv_rope_args(
        qkv, q_norm, k_norm, positions, cos_sin, params, k_cache, v_cache, slot_mapping, q_out);
    launch_add_rms_norm(norm, m, k, stream_);
    launch_decode_gemm_qkv_rope(norm.normed.data, weight.data, bias_ptr, args, k, 0, stream_);
    return;
  }
  Backend::qkv_projection(norm, weight, bias, qkv, q_norm, k_norm, positions, cos_sin, params,
                          k_cache, v_cache, slot_mapping, q_out);
}

void CudaBackend::silu_mul_linear(const Tensor& gate_up, const Tensor& activated,
                                  const Tensor& weight, const Tensor& bias, const Tensor& out) {
  check_silu_mul(gate_up, activated);
  const void* bias_ptr = check_linear(activated, weight, bias, out);
  const int64_t k = activated.size(-1), m = activated.numel() / k, n = weight.size(0);
  const auto fused = [&] {
    launch_gemv_silu(gate_up.data, activated.data, weight.data, bias_ptr, out.data, m, n, k,
                     stream_);
  };
  const auto activation_kernel = [&] {
    launch_silu_mul(gate_up.data, activated.data, m, k, stream_);
  };
  fused_or_linear(GemvKind::kSiluMul, fused, activation_kernel, activated, weight, bias, out);
}

}  // namespace hadron::cuda
