// CudaBackend's declaration, shared by the .cpp files that implement its ops. Internal to
// backends/cuda (includes CUDA headers); host code uses cuda_backend.h.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernels.h"
#include "core/error.h"

namespace hadron::cuda {

inline bool on_gpu(const Tensor& t) { return t.device == Device::CUDA && t.is_contiguous(); }

// Throws unless t is a defined, contiguous GPU tensor of `dtype`.
void check_tensor(const Tensor& t, DType dtype, const char* name);

// Validates launch_rms_norm's operands (residual undefined: a plain norm of x).
void check_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& residual_out,
                    const Tensor& weight, const Tensor& out);

// Validates launch_silu_mul's operands.
void check_silu_mul(const Tensor& gate_up, const Tensor& out);

// Validates qkv_rope_store's operands and returns its kernel's arguments (attention.cpp).
QkvRopeStoreArgs checked_qkv_rope_args(const Tensor& qkv, const Tensor& q_norm,
                                       const Tensor& k_norm, const Tensor& positions,
                                       const Tensor& cos_sin, const QkvParams& params,
                                       const Tensor& k_cache, const Tensor& v_cache,
                                       const Tensor& slot_mapping, const Tensor& q_out);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_idx) : device_idx_(device_idx) {
    int n_devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n_devices));
    HADRON_CHECK(device_idx >= 0 && device_idx < n_devices, "CUDA device {} of {}", device_idx,
                 n_devices);
    CUDA_CHECK(cudaSetDevice(device_idx));
    CUDA_CHECK(cudaDeviceGetAttribute(&n_sms_, cudaDevAttrMultiProcessorCount, device_idx));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    gemm_ = std::make_unique<cuda::Gemm>(stream_);
    // Fixed size, so decode steps can be captured into CUDA graphs (no allocation later).
    decode_workspace_ = allocate(decode_workspace_max_floats(n_sms_) * sizeof(float));
    router_done_ = allocate(sizeof(unsigned));
    int l2_bytes = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device_idx));
    l2_flush_ = allocate(2 * static_cast<size_t>(l2_bytes));
    CUDA_CHECK(cudaMemsetAsync(router_done_.data(), 0, sizeof(unsigned), stream_));
  }
  ~CudaBackend() override {
    gemm_.reset();
    decode_workspace_.reset();
    router_done_.reset();
    l2_flush_.reset();
    cudaStreamDestroy(stream_);
  }

  Device device() const override { return Device::CUDA; }
  std::string name() const override { return "cuda"; }
  DType activation_dtype() const override { return DType::BF16; }
  DType weight_dtype(DType checkpoint_dtype) const override {
    return is_float(checkpoint_dtype) ? DType::BF16 : checkpoint_dtype;
  }

  Buffer allocate(size_t bytes) override {
    void* data = nullptr;
    if (bytes > 0) CUDA_CHECK(cudaMalloc(&data, bytes));
    return Buffer(data, bytes, Device::CUDA, [](void* p) { cudaFree(p); });
  }

  void copy(const Tensor& src, const Tensor& dst) override {
    HADRON_CHECK(src.dtype == dst.dtype && src.numel() == dst.numel() && src.is_contiguous() &&
                     dst.is_contiguous(),
                 "copy {} -> {}", src.describe(), dst.describe());
    if (src.nbytes() == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.nbytes(), cudaMemcpyDefault, stream_));
    // Host memory may be pageable and reused by the caller right after the call.
    if (src.device == Device::CPU || dst.device == Device::CPU) synchronize();
  }

  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::optional<DeviceMemory> memory() override;
  Buffer allocate_host(size_t bytes) override;
  void copy_async(const Tensor& src, const Tensor& dst) override;
  std::unique_ptr<DeviceEvent> record_event() override;
  std::unique_ptr<DeviceGraph> capture_graph(const CaptureFn& work) override;

  void embedding(const Tensor& ids, const Tensor& table, const Tensor& out) override;
  void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override;
  void add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight, float eps,
                    const Tensor& out) override;
  void linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const Tensor& out) override;
  // fp8_linear.cu: plain kernels, the CPU reference's arithmetic.
  bool supports_fp8_linear() const override { return true; }
  void quantize_fp8_per_token_group(const Tensor& x, bool ue8m0,
                                    const Fp8Activations& out) override;
  void fp8_linear(const Fp8Activations& x, const Fp8Weight& weight, const Tensor& bias,
                  const Tensor& out) override;
  void qkv_projection(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                      const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                      const Tensor& positions, const Tensor& cos_sin, const QkvParams& params,
                      const Tensor& k_cache, const Tensor& v_cache, const Tensor& slot_mapping,
                      const Tensor& q_out) override;
  void silu_mul_linear(const Tensor& gate_up, const Tensor& activated, const Tensor& weight,
                       const Tensor& bias, const Tensor& out) override;
  void add_rms_norm_linear(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                           const Tensor& out) override;
  void add_rms_norm_linear_silu(const AddRmsNorm& norm, const Tensor& weight, const Tensor& gate_up,
                                const Tensor& activated) override;
  void rope(const Tensor& x, const Tensor& positions, const Tensor& cos_sin,
            RopeStyle style) override;
  void store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                const Tensor& slot_mapping) override;
  void qkv_rope_store(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                      const Tensor& positions, const Tensor& cos_sin, const QkvParams& params,
                      const Tensor& k_cache, const Tensor& v_cache, const Tensor& slot_mapping,
                      const Tensor& q_out) override;
  void check_attention(int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) const override;
  void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                 const BatchMeta& meta, const AttentionParams& params, const Tensor& out) override;
  void check_mla(const MlaParams& params) const override;
  void mla_rope_store(const Tensor& q, const Tensor& kv, const Tensor& kv_norm,
                      const Tensor& positions, const Tensor& cos_sin, const MlaParams& params,
                      const Tensor& latent_cache, const Tensor& slot_mapping) override;
  void mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                     const BatchMeta& meta, const MlaParams& params, const Tensor& out) override;
  void silu_mul(const Tensor& gate_up, const Tensor& out) override;
  void check_linear_attention(const LinearAttentionParams& params) const override;
  void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_states,
                     const BatchMeta& meta, const Tensor& out) override;
  void gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log,
                        const Tensor& dt_bias, const Tensor& states, const BatchMeta& meta,
                        const LinearAttentionParams& params, const Tensor& out) override;
  void rms_norm_gated(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps,
                      const Tensor& out) override;
  void sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& out) override;
  void gather_rows(const Tensor& x, const Tensor& rows, const Tensor& out) override;
  void moe_route(const Tensor& logits, const Tensor& correction_bias,
                 const MoeRoutingParams& params, const Tensor& topk_ids,
                 const Tensor& topk_weights) override;
  void moe_router(const Tensor& x, const Tensor& router, const Tensor& router_bias,
                  const Tensor& correction_bias, const MoeRoutingParams& params,
                  const Tensor& logits, const Tensor& topk_ids,
                  const Tensor& topk_weights) override;
  void moe_experts(const Tensor& x, const Tensor& topk_ids, const Tensor& topk_weights,
                   const MoeExpertWeights& weights, const MoeExpertParams& params,
                   const Tensor& workspace, const Tensor& out) override;
  size_t moe_workspace_bytes(int64_t n_tokens, int64_t top_k, int64_t n_experts, int64_t hidden,
                             int64_t inter) const override;
  void sample(const Tensor& logits, const SamplingBatch& batch, const Tensor& tokens) override;
  void begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                  const Tensor& sampled) override;
  void end_step(const StepStaging& staging, const Tensor& sampled) override;

 private:
  // The GEMV variants linear.cpp chooses between: the plain product, or with the norm or the
  // activation in front fused in, or the norm in front and the activation behind.
  enum class GemvKind { kPlain, kNorm, kSiluMul, kNormSilu };
  // For m <= kGemvMaxRows: whether `gemv` (a GEMV kind) beat `gemm` (the same work through
  // cuBLASLt, with the separate norm or activation kernel in front) on this shape; timed once
  // per shape and kind (linear.cpp).
  template <typename Gemv, typename Gemm>
  bool prefer_gemv(GemvKind kind, int64_t m, int64_t n, int64_t k, bool out_f32, const Gemv& gemv,
                   const Gemm& gemm);
  // A fused op in front of a product (add_rms_norm_linear, silu_mul_linear): `fused` (the
  // GEMV of `kind` computing x itself) where it is chosen, else `first` (the kernel that
  // writes x) then linear(x, weight, bias, out).
  template <typename Fused, typename First>
  void fused_or_linear(GemvKind kind, const Fused& fused, const First& first, const Tensor& x,
                       const Tensor& weight, const Tensor& bias, const Tensor& out);

  int device_idx_;
  int n_sms_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<cuda::Gemm> gemm_;
  Buffer decode_workspace_;  // split-KV partial results of decode attention
  Buffer router_done_;       // moe_router's block counter (zero between launches)
  Buffer l2_flush_;          // twice L2, read before each timed launch of prefer_gemv
  std::map<std::tuple<GemvKind, int64_t, int64_t, int64_t, bool>, bool> gemv_choice_;
};

}  // namespace hadron::cuda
