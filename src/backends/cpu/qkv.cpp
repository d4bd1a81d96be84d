// Fused qkv split, q/k RMSNorm, RoPE and paged KV write.
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"

namespace hadron {

void check_position_and_slot(int32_t position, const Tensor& cos_sin, int32_t slot,
                             int64_t n_slots) {
  HADRON_CHECK(position >= 0 && position < cos_sin.size(0) && slot >= 0 && slot < n_slots,
               "position {} (table {}) or slot {} (cache {}) out of range", position,
               cos_sin.size(0), slot, n_slots);
}

void CpuBackend::qkv_rope_store(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                                const Tensor& positions, const Tensor& cos_sin,
                                const QkvParams& params, const Tensor& k_cache,
                                const Tensor& v_cache, const Tensor& slot_mapping,
                                const Tensor& q_out) {
  const int64_t n_tokens = qkv.size(0), d = params.head_dim;
  const int64_t nq = params.n_heads, nkv = params.n_kv_heads, width = (nq + 2 * nkv) * d;
  const int64_t rotary_dim = cos_sin.size(1);
  const int64_t n_slots = k_cache.size(0) * k_cache.size(1);
  HADRON_CHECK(
      qkv.dtype == DType::F32 && qkv.size(-1) == width && q_out.numel() == n_tokens * nq * d &&
          (k_cache.dtype == DType::F32 || k_cache.dtype == DType::F8_E4M3) &&
          v_cache.dtype == k_cache.dtype && k_cache.size(2) == nkv && k_cache.size(3) == d &&
          rotary_dim <= d && positions.size(0) == n_tokens && slot_mapping.size(0) == n_tokens,
      "qkv_rope_store {} (heads {}/{} x {}) into q {} and cache {}", qkv.describe(), nq, nkv, d,
      q_out.describe(), k_cache.describe());
  std::vector<float> q_weight(d, 1.0f), k_weight(d, 1.0f);
  if (q_norm.defined()) load_row_f32(q_norm, 0, d, q_weight.data());
  if (k_norm.defined()) load_row_f32(k_norm, 0, d, k_weight.data());
  // k and v are made in fp32, then stored in the cache's dtype (FP8: e4m3 at scale 1).
  std::vector<float> k_row(nkv * d);
  const size_t cache_row_bytes = nkv * d * dtype_size(k_cache.dtype);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t pos = positions.ptr<int32_t>()[t];
    const int32_t slot = slot_mapping.ptr<int32_t>()[t];
    check_position_and_slot(pos, cos_sin, slot, n_slots);
    const float* row = qkv.ptr<float>() + t * width;
    const float* rope_row = cos_sin.ptr<float>() + pos * rotary_dim;
    float* q = q_out.ptr<float>() + t * nq * d;
    float* k = k_row.data();
    std::memcpy(q, row, nq * d * sizeof(float));
    std::memcpy(k, row + nq * d, nkv * d * sizeof(float));
    convert_from_f32(row + (nq + nkv) * d,
                     static_cast<char*>(v_cache.data) + slot * cache_row_bytes, v_cache.dtype,
                     nkv * d);
    for (int64_t h = 0; h < nq; ++h) {
      if (q_norm.defined())
        rms_normalize(q + h * d, q_weight.data(), d, params.norm_eps, q + h * d);
      rope_head(q + h * d, rope_row, rotary_dim, params.style);
    }
    for (int64_t h = 0; h < nkv; ++h) {
      if (k_norm.defined())
        rms_normalize(k + h * d, k_weight.data(), d, params.norm_eps, k + h * d);
      rope_head(k + h * d, rope_row, rotary_dim, params.style);
    }
    convert_from_f32(k, static_cast<char*>(k_cache.data) + slot * cache_row_bytes, k_cache.dtype,
                     nkv * d);
  }
}

}  // namespace hadron
