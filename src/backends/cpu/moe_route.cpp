// Mixture-of-experts routing: scores, optional grouped selection, top-k, renormalisation.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"

namespace hadron {
namespace {

// Sets choice[e] = -inf for experts outside the best params.topk_group groups.
void mask_groups(const MoeRoutingParams& params, std::vector<float>& choice) {
  const int64_t n_experts = static_cast<int64_t>(choice.size());
  const int64_t group_size = n_experts / params.n_group;
  std::vector<float> group_scores(params.n_group);
  for (int64_t g = 0; g < params.n_group; ++g) {
    std::vector<float> members(choice.begin() + g * group_size,
                               choice.begin() + (g + 1) * group_size);
    std::partial_sort(members.begin(), members.begin() + std::min<int64_t>(2, group_size),
                      members.end(), std::greater<>());
    group_scores[g] = members[0] + (group_size > 1 ? members[1] : 0.0f);
  }
  std::vector<int64_t> order(params.n_group);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return group_scores[a] > group_scores[b]; });
  for (int64_t rank = params.topk_group; rank < params.n_group; ++rank)
    std::fill(choice.begin() + order[rank] * group_size,
              choice.begin() + (order[rank] + 1) * group_size,
              -std::numeric_limits<float>::infinity());
}

void route_token(const float* logits, const float* correction, int64_t n_experts,
                 const MoeRoutingParams& params, int32_t* ids, float* weights) {
  std::vector<float> scores(logits, logits + n_experts);
  if (params.scoring == MoeScoring::kSoftmax) {
    const float max_logit = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (float& s : scores) sum += (s = std::exp(s - max_logit));
    for (float& s : scores) s = static_cast<float>(s / sum);
  } else {
    for (float& s : scores) s = 1.0f / (1.0f + std::exp(-s));
  }
  std::vector<float> choice = scores;
  if (correction != nullptr)
    for (int64_t e = 0; e < n_experts; ++e) choice[e] += correction[e];
  if (params.n_group > 1) mask_groups(params, choice);
  std::vector<int32_t> order(n_experts);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return choice[a] > choice[b]; });
  double sum = 0;
  for (int64_t j = 0; j < params.top_k; ++j) sum += scores[order[j]];
  if (params.scoring == MoeScoring::kSigmoid) sum += 1e-20;
  for (int64_t j = 0; j < params.top_k; ++j) {
    ids[j] = order[j];
    const double weight = params.normalize ? scores[order[j]] / sum : scores[order[j]];
    weights[j] = static_cast<float>(weight * params.scaling);
  }
}

}  // namespace

void CpuBackend::moe_route(const Tensor& logits, const Tensor& correction_bias,
                           const MoeRoutingParams& params, const Tensor& topk_ids,
                           const Tensor& topk_weights) {
  const int64_t n_tokens = logits.size(0), n_experts = logits.size(1), k = params.top_k;
  HADRON_CHECK(logits.dtype == DType::F32 && logits.ndim == 2 && topk_ids.dtype == DType::I32 &&
                   topk_weights.dtype == DType::F32 && topk_ids.numel() == n_tokens * k &&
                   topk_weights.numel() == n_tokens * k && k >= 1 && k <= n_experts,
               "moe_route {} top-{} into {} and {}", logits.describe(), k, topk_ids.describe(),
               topk_weights.describe());
  HADRON_CHECK(params.n_group >= 1 && n_experts % params.n_group == 0 && params.topk_group >= 1 &&
                   params.topk_group <= params.n_group &&
                   k <= params.topk_group * (n_experts / params.n_group),
               "moe_route: {} experts in {} groups keeping {} cannot give top-{}", n_experts,
               params.n_group, params.topk_group, k);
  std::vector<float> correction;
  if (correction_bias.defined()) {
    HADRON_CHECK(correction_bias.numel() == n_experts, "correction bias {} for {} experts",
                 correction_bias.describe(), n_experts);
    correction.resize(n_experts);
    load_row_f32(correction_bias, 0, n_experts, correction.data());
  }
  for (int64_t t = 0; t < n_tokens; ++t)
    route_token(logits.ptr<float>() + t * n_experts,
                correction.empty() ? nullptr : correction.data(), n_experts, params,
                topk_ids.ptr<int32_t>() + t * k, topk_weights.ptr<float>() + t * k);
}

}  // namespace hadron
