// Mixture-of-experts expert computation: for each expert, gather its tokens, run its gated
// MLP with `linear`, and add the weighted rows to the output.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vector_math.h"
#include "core/error.h"

namespace hadron {
namespace {

// out[i] = act(gate_up) for one row of 2 * inter values.
void activate(const float* gate_up, int64_t inter, const MoeExpertParams& params, float* out) {
  switch (params.activation) {
    case MoeActivation::kSwiGlu:
      for (int64_t i = 0; i < inter; ++i) {
        const float gate = gate_up[i];
        out[i] = gate / (1.0f + std::exp(-gate)) * gate_up[inter + i];
      }
      return;
    case MoeActivation::kClampedSwiGluInterleaved:
      for (int64_t i = 0; i < inter; ++i) {
        const float gate = std::min(gate_up[2 * i], params.swiglu_limit);
        const float up = std::clamp(gate_up[2 * i + 1], -params.swiglu_limit, params.swiglu_limit);
        out[i] = (up + 1.0f) * gate / (1.0f + std::exp(-params.swiglu_alpha * gate));
      }
      return;
  }
}

// Expert `e`'s [rows, cols] matrix (or [cols] vector when `stacked` is [E, cols]).
Tensor expert_slice(const Tensor& stacked, int64_t e) {
  if (!stacked.defined()) return Tensor{};
  const Tensor one = stacked.slice_rows(e, e + 1);
  return stacked.ndim == 2 ? one.reshape({stacked.size(1)})
                           : one.reshape({stacked.size(1), stacked.size(2)});
}

// Expert `e`'s [rows, cols] matrix as `linear` takes it: the stored slice, or for MXFP4 the
// slice decoded into `decoded`.
Tensor expert_matrix(const Tensor& stacked, const Tensor& scales, int64_t e,
                     std::vector<float>& decoded) {
  if (!scales.defined()) return expert_slice(stacked, e);
  const int64_t rows = stacked.size(1), cols = stacked.size(2) * 2;
  decoded.resize(rows * cols);
  decode_mxfp4_rows(stacked.ptr<uint8_t>() + e * rows * cols / 2,
                    scales.ptr<uint8_t>() + e * rows * cols / 32, rows, cols, decoded.data());
  return Tensor::view_of(decoded.data(), DType::F32, {rows, cols});
}

}  // namespace

void CpuBackend::moe_experts(const Tensor& x, const Tensor& topk_ids, const Tensor& topk_weights,
                             const MoeExpertWeights& weights, const MoeExpertParams& params,
                             const Tensor& /*workspace*/, const Tensor& out) {
  const int64_t n_tokens = x.size(0), hidden = x.size(1), k = topk_ids.size(-1);
  const int64_t n_experts = weights.n_experts(), inter = weights.inter();
  HADRON_CHECK(x.dtype == DType::F32 && out.dtype == DType::F32 && out.numel() == x.numel() &&
                   topk_ids.numel() == n_tokens * k && topk_weights.numel() == n_tokens * k &&
                   weights.gate_up.ndim == 3 && weights.gate_up.size(1) == 2 * inter &&
                   weights.hidden() == hidden && weights.down.ndim == 3 &&
                   weights.down.size(0) == n_experts && weights.down.size(1) == hidden,
               "moe_experts x {} ids {} gate_up {} down {} out {}", x.describe(),
               topk_ids.describe(), weights.gate_up.describe(), weights.down.describe(),
               out.describe());
  if (weights.mxfp4())
    HADRON_CHECK(weights.gate_up.dtype == DType::U8 && weights.down.dtype == DType::U8 &&
                     weights.down_scales.defined() && hidden % 32 == 0 && inter % 32 == 0 &&
                     weights.gate_up_scales.numel() == n_experts * 2 * inter * hidden / 32 &&
                     weights.down_scales.numel() == n_experts * hidden * inter / 32,
                 "moe_experts MXFP4 gate_up {} scales {} down {} scales {}",
                 weights.gate_up.describe(), weights.gate_up_scales.describe(),
                 weights.down.describe(), weights.down_scales.describe());
  float* dst = out.ptr<float>();
  if (!params.accumulate) std::fill(dst, dst + n_tokens * hidden, 0.0f);
  const int32_t* ids = topk_ids.ptr<int32_t>();
  const int64_t n_total = params.n_total_experts > 0 ? params.n_total_experts : n_experts;
  HADRON_CHECK(params.first_expert >= 0 && params.first_expert + n_experts <= n_total,
               "moe_experts: experts {}..{} of {}", params.first_expert,
               params.first_expert + n_experts, n_total);
  std::vector<int64_t> rows;  // flat (token, slot) indices routed to the current expert
  std::vector<float> xs, gate_up, activated, ys, gate_up_decoded, down_decoded;
  for (int64_t e = 0; e < n_experts; ++e) {
    rows.clear();
    for (int64_t r = 0; r < n_tokens * k; ++r) {
      HADRON_CHECK(ids[r] >= 0 && ids[r] < n_total, "expert id {} of {}", ids[r], n_total);
      if (ids[r] == params.first_expert + e) rows.push_back(r);
    }
    if (rows.empty()) continue;
    const auto n = static_cast<int64_t>(rows.size());
    xs.resize(n * hidden), gate_up.resize(n * 2 * inter), activated.resize(n * inter);
    ys.resize(n * hidden);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(&xs[i * hidden], x.ptr<float>() + rows[i] / k * hidden, hidden * sizeof(float));
    linear(Tensor::view_of(xs.data(), DType::F32, {n, hidden}),
           expert_matrix(weights.gate_up, weights.gate_up_scales, e, gate_up_decoded),
           expert_slice(weights.gate_up_bias, e),
           Tensor::view_of(gate_up.data(), DType::F32, {n, 2 * inter}));
    for (int64_t i = 0; i < n; ++i)
      activate(&gate_up[i * 2 * inter], inter, params, &activated[i * inter]);
    linear(Tensor::view_of(activated.data(), DType::F32, {n, inter}),
           expert_matrix(weights.down, weights.down_scales, e, down_decoded),
           expert_slice(weights.down_bias, e), Tensor::view_of(ys.data(), DType::F32, {n, hidden}));
    for (int64_t i = 0; i < n; ++i) {
      const float w = topk_weights.ptr<float>()[rows[i]];
      float* row = dst + rows[i] / k * hidden;
      axpy_f32(w, &ys[i * hidden], row, hidden);
    }
  }
}

}  // namespace hadron
