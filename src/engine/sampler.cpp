#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace hadron {

int32_t argmax(std::span<const float> values) {
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (params_->temperature <= 0.0f || params_->top_k == 1) return argmax(logits);
  // Candidates sorted by logit, cut by top-k, then softmax at the temperature.
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t k = params_->top_k > 0 ? std::min<size_t>(params_->top_k, order.size())
                                     : order.size();
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  order.resize(k);
  std::vector<double> probs(k);
  const double max_logit = logits[order[0]];
  double total = 0;
  for (size_t i = 0; i < k; ++i)
    total += probs[i] = std::exp((logits[order[i]] - max_logit) / params_->temperature);
  // top-p keeps the smallest prefix whose mass reaches top_p; min-p drops tokens below
  // min_p times the top probability.
  size_t kept = 0;
  double mass = 0;
  while (kept < k && (kept == 0 || mass < params_->top_p * total) &&
         probs[kept] >= params_->min_p * probs[0]) {
    mass += probs[kept++];
  }
  std::uniform_real_distribution<double> uniform(0.0, mass);
  double pick = uniform(rng_);
  for (size_t i = 0; i < kept; ++i)
    if ((pick -= probs[i]) <= 0) return order[i];
  return order[kept - 1];
}

}  // namespace hadron
