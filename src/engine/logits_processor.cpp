#include "engine/logits_processor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace hadron {

void process_logits(std::span<float> logits, const SamplingParams& params,
                    std::span<const int32_t> prompt, std::span<const int32_t> output,
                    std::span<const int32_t> eos_token_ids) {
  const auto vocab = static_cast<int32_t>(logits.size());
  auto valid = [vocab](int32_t token) { return token >= 0 && token < vocab; };
  if (params.repetition_penalty != 1.0f) {
    std::vector<bool> seen(vocab);
    for (auto tokens : {prompt, output})
      for (int32_t t : tokens)
        if (valid(t)) seen[t] = true;
    for (int32_t t = 0; t < vocab; ++t)
      if (seen[t])
        logits[t] = logits[t] > 0 ? logits[t] / params.repetition_penalty
                                  : logits[t] * params.repetition_penalty;
  }
  if (params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f) {
    std::unordered_map<int32_t, int> counts;
    for (int32_t t : output)
      if (valid(t)) counts[t]++;
    for (const auto& [token, count] : counts)
      logits[token] -= params.frequency_penalty * count + params.presence_penalty;
  }
  for (const auto& [token, bias] : params.logit_bias)
    if (valid(token)) logits[token] += bias;
  if (static_cast<int64_t>(output.size()) < params.min_tokens) {
    constexpr float kBanned = -std::numeric_limits<float>::infinity();
    for (auto tokens : {eos_token_ids, std::span<const int32_t>(params.stop_token_ids)})
      for (int32_t t : tokens)
        if (valid(t)) logits[t] = kBanned;
  }
}

Logprobs compute_logprobs(std::span<const float> logits, int32_t token, int k) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - max_logit);
  const float log_norm = max_logit + static_cast<float>(std::log(sum));
  Logprobs result{{token, logits[token] - log_norm}, {}};
  if (k > 0) {
    std::vector<int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t top = std::min<size_t>(k, order.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    for (size_t i = 0; i < top; ++i) result.top.push_back({order[i], logits[order[i]] - log_norm});
  }
  return result;
}

}  // namespace hadron
