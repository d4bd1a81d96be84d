// The CPU backend: the reference for every op. Plain loops, fp32 activations and
// accumulation, multithreaded over rows/heads with the global ThreadPool.
#pragma once

#include <memory>
#include <vector>

#include "ops/backend.h"

namespace hadron {

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::CPU; }
  std::string name() const override { return "cpu"; }
  DType activation_dtype() const override { return DType::F32; }
  DType weight_dtype(DType checkpoint_dtype) const override;

  Buffer allocate(size_t bytes) override { return Buffer::host(bytes); }
  void copy(const Tensor& src, const Tensor& dst) override;
  void synchronize() override {}

  void embedding(const Tensor& ids, const Tensor& table, const Tensor& out) override;
  void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override;
  void add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight, float eps,
                    const Tensor& out) override;
  void linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const Tensor& out) override;
  bool supports_fp8_linear() const override { return true; }
  bool supports_fp8_kv_cache() const override { return true; }
  void quantize_fp8_per_token_group(const Tensor& x, bool ue8m0,
                                    const Fp8Activations& out) override;
  void fp8_linear(const Fp8Activations& x, const Fp8Weight& weight, const Tensor& bias,
                  const Tensor& out) override;
  void rope(const Tensor& x, const Tensor& positions, const Tensor& cos_sin,
            RopeStyle style) override;
  void qkv_rope_store(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                      const Tensor& positions, const Tensor& cos_sin, const QkvParams& params,
                      const Tensor& k_cache, const Tensor& v_cache, const Tensor& slot_mapping,
                      const Tensor& q_out) override;
  void store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                const Tensor& slot_mapping) override;
  void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                 const BatchMeta& meta, const AttentionParams& params, const Tensor& out) override;
  void check_mla(const MlaParams& params) const override;
  void mla_rope_store(const Tensor& q, const Tensor& kv, const Tensor& kv_norm,
                      const Tensor& positions, const Tensor& cos_sin, const MlaParams& params,
                      const Tensor& latent_cache, const Tensor& slot_mapping) override;
  void mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                     const BatchMeta& meta, const MlaParams& params, const Tensor& out) override;
  void check_linear_attention(const LinearAttentionParams& params) const override;
  void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_states,
                     const BatchMeta& meta, const Tensor& out) override;
  void gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log,
                        const Tensor& dt_bias, const Tensor& states, const BatchMeta& meta,
                        const LinearAttentionParams& params, const Tensor& out) override;
  void rms_norm_gated(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps,
                      const Tensor& out) override;
  void sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& out) override;
  void check_sparse_attention(const IndexerParams& params) const override;
  void indexer_rope_store(const Tensor& q, const Tensor& k, const Tensor& k_norm,
                          const Tensor& k_bias, const Tensor& positions, const Tensor& cos_sin,
                          const IndexerParams& params, const Tensor& index_cache,
                          const Tensor& slot_mapping) override;
  void indexer_select(const Tensor& q, const Tensor& head_weights, const Tensor& index_cache,
                      const BatchMeta& meta, const IndexerParams& params,
                      const Tensor& selected) override;
  void sparse_mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                            const Tensor& selected, const BatchMeta& meta, const MlaParams& params,
                            const Tensor& out) override;
  void silu_mul(const Tensor& gate_up, const Tensor& out) override;
  void gather_rows(const Tensor& x, const Tensor& rows, const Tensor& out) override;
  void moe_route(const Tensor& logits, const Tensor& correction_bias,
                 const MoeRoutingParams& params, const Tensor& topk_ids,
                 const Tensor& topk_weights) override;
  void moe_experts(const Tensor& x, const Tensor& topk_ids, const Tensor& topk_weights,
                   const MoeExpertWeights& weights, const MoeExpertParams& params,
                   const Tensor& workspace, const Tensor& out) override;
};

std::unique_ptr<Backend> make_cpu_backend();

// Reads element i of a float tensor of any float dtype as fp32.
float load_f32(const Tensor& t, int64_t i);
// Converts `n` elements starting at element `offset` of a float tensor to fp32.
void load_row_f32(const Tensor& t, int64_t offset, int64_t n, float* dst);

// Row kernels shared by the ops.
// out = x / rms(x) * weight; x and out may alias.
void rms_normalize(const float* x, const float* weight, int64_t width, float eps, float* out);
// Rotates one head in place; cos_sin_row holds rotary_dim/2 cosines then as many sines.
void rope_head(float* head, const float* cos_sin_row, int64_t rotary_dim, RopeStyle style);
// Throws unless a token's position fits the rope table and its slot the paged cache.
void check_position_and_slot(int32_t position, const Tensor& cos_sin, int32_t slot,
                             int64_t n_slots);

// Where each row of a step's batch sits: its sequence and its position in that sequence.
struct RowPlace {
  int32_t seq = 0;
  int64_t position = 0;
};
std::vector<RowPlace> row_places(const BatchMeta& meta);

}  // namespace hadron
