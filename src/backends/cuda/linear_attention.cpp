// CudaBackend's gated DeltaNet ops (kernels in linear_attention.cu): bf16 activations and
// convolution state, f32 recurrent state.
#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/kernels.h"

namespace hadron::cuda {
namespace {

LinearAttentionArgs sequence_args(const BatchMeta& meta) {
  check_tensor(meta.cu_seqlens_q, DType::I32, "cu_seqlens_q");
  check_tensor(meta.positions, DType::I32, "positions");
  check_tensor(meta.state_slots, DType::I32, "state_slots");
  HADRON_CHECK(
      meta.state_slots.numel() == meta.n_seqs && meta.cu_seqlens_q.numel() == meta.n_seqs + 1,
      "linear attention needs a state slot per sequence ({} for {} sequences)",
      meta.state_slots.describe(), meta.n_seqs);
  return {meta.cu_seqlens_q.ptr<int32_t>(), meta.positions.ptr<int32_t>(),
          meta.state_slots.ptr<int32_t>(), meta.n_seqs, meta.max_q_len};
}

// Parameters may stay in the checkpoint's f32 (A_log) or be bf16.
bool is_f32_param(const Tensor& t, const char* name) {
  HADRON_CHECK(on_gpu(t) && (t.dtype == DType::F32 || t.dtype == DType::BF16),
               "{} must be a contiguous bf16 or f32 GPU tensor, got {}", name, t.describe());
  return t.dtype == DType::F32;
}

}  // namespace

void CudaBackend::check_linear_attention(const LinearAttentionParams& params) const {
  if (params.key_head_dim <= 0 || params.key_head_dim > kDeltaMaxKeyDim ||
      params.value_head_dim <= 0 || params.n_key_heads <= 0 ||
      params.n_value_heads % params.n_key_heads != 0 || params.conv_kernel < 2 ||
      params.conv_kernel > kConvMaxKernel)
    input_error(
        "the CUDA backend cannot run gated DeltaNet layers of key heads {} x {}, value heads {} "
        "x {}, convolution {} (supported: key head dim up to {}, convolution 2 to {}); run this "
        "model with --device cpu",
        params.n_key_heads, params.key_head_dim, params.n_value_heads, params.value_head_dim,
        params.conv_kernel, kDeltaMaxKeyDim, kConvMaxKernel);
}

void CudaBackend::causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_states,
                                const BatchMeta& meta, const Tensor& out) {
  check_tensor(x, DType::BF16, "conv x");
  check_tensor(conv_states, DType::BF16, "conv_states");
  check_tensor(out, DType::BF16, "conv out");
  const bool weight_f32 = is_f32_param(weight, "conv weight");
  const int64_t channels = x.size(1), kernel = weight.size(1);
  HADRON_CHECK(weight.size(0) == channels && conv_states.size(1) == channels &&
                   conv_states.size(2) == kernel - 1 && out.numel() == x.numel() &&
                   x.size(0) == meta.n_tokens && kernel >= 2 && kernel <= kConvMaxKernel,
               "causal_conv1d {} with weight {} and state {} into {}", x.describe(),
               weight.describe(), conv_states.describe(), out.describe());
  launch_causal_conv1d(sequence_args(meta), x.data, weight.data, weight_f32, conv_states.data,
                       out.data, channels, static_cast<int>(kernel), stream_);
}

void CudaBackend::gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log,
                                   const Tensor& dt_bias, const Tensor& states,
                                   const BatchMeta& meta, const LinearAttentionParams& params,
                                   const Tensor& out) {
  check_linear_attention(params);
  check_tensor(qkv, DType::BF16, "delta rule qkv");
  check_tensor(ba, DType::F32, "delta rule ba");
  check_tensor(out, DType::BF16, "delta rule out");
  if (states.dtype != DType::F32)
    input_error(
        "the CUDA backend keeps gated DeltaNet state in float32 only (got {}); set "
        "mamba_ssm_dtype to float32 or run with --device cpu",
        dtype_name(states.dtype));
  check_tensor(states, DType::F32, "recurrent states");
  const bool a_log_f32 = is_f32_param(a_log, "A_log");
  const bool dt_bias_f32 = is_f32_param(dt_bias, "dt_bias");
  const int64_t hv = params.n_value_heads, n_tokens = qkv.size(0);
  HADRON_CHECK(qkv.size(1) == params.conv_dim() && ba.size(0) == n_tokens && ba.size(1) == 2 * hv &&
                   states.size(1) == hv && states.size(2) == params.key_head_dim &&
                   states.size(3) == params.value_head_dim &&
                   out.numel() == n_tokens * params.value_dim() && a_log.numel() == hv &&
                   dt_bias.numel() == hv && n_tokens == meta.n_tokens,
               "gated_delta_rule {} {} with state {} into {}", qkv.describe(), ba.describe(),
               states.describe(), out.describe());
  const DeltaRuleShape shape{static_cast<int>(params.n_key_heads), static_cast<int>(hv),
                             static_cast<int>(params.key_head_dim),
                             static_cast<int>(params.value_head_dim)};
  launch_gated_delta_rule(sequence_args(meta), shape, qkv.data, ba.data, a_log.data, dt_bias.data,
                          a_log_f32, dt_bias_f32, states.ptr<float>(), out.data, stream_);
}

void CudaBackend::rms_norm_gated(const Tensor& x, const Tensor& gate, const Tensor& weight,
                                 float eps, const Tensor& out) {
  check_tensor(x, DType::BF16, "rms_norm_gated x");
  check_tensor(gate, DType::BF16, "rms_norm_gated gate");
  check_tensor(out, DType::BF16, "rms_norm_gated out");
  const bool weight_f32 = is_f32_param(weight, "rms_norm_gated weight");
  const int64_t width = weight.numel();
  HADRON_CHECK(
      width > 0 && x.numel() % width == 0 && gate.numel() == x.numel() && out.numel() == x.numel(),
      "rms_norm_gated {} gate {} weight {} into {}", x.describe(), gate.describe(),
      weight.describe(), out.describe());
  launch_rms_norm_gated(x.data, gate.data, weight.data, weight_f32, eps, out.data,
                        x.numel() / width, width, stream_);
}

void CudaBackend::sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& out) {
  check_tensor(x, DType::BF16, "sigmoid_mul x");
  check_tensor(gate, DType::BF16, "sigmoid_mul gate");
  check_tensor(out, DType::BF16, "sigmoid_mul out");
  const int64_t rows = x.size(0), width = rows > 0 ? x.numel() / rows : 0;
  const int64_t gate_width = rows > 0 ? gate.numel() / rows : 0;
  HADRON_CHECK(
      gate.size(0) == rows && out.numel() == x.numel() && (gate_width == width || gate_width == 1),
      "sigmoid_mul {} by {} into {}", x.describe(), gate.describe(), out.describe());
  launch_sigmoid_mul(x.data, gate.data, out.data, rows, width, gate_width, stream_);
}

}  // namespace hadron::cuda
