// The host sampling reference (ops/sampling.cpp) against its definition in
// ops/sampling.h, checked by brute force on small vocabularies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ops/backend.h"
#include "ops/sampling.h"

namespace hadron {
namespace {

std::vector<float> random_logits(std::mt19937_64& rng, int n) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(n);
  for (float& v : logits) v = normal(rng);
  return logits;
}

// Empirical frequencies over many draws approach the renormalised softmax of the kept set.
TEST(SamplingReference, FrequenciesFollowFilteredSoftmax) {
  std::mt19937_64 rng(std::random_device{}());
  const std::vector<float> logits = random_logits(rng, 12);
  const SampleRowParams params{0.8f, 6, 0.9f, 0.05f};
  // Expected kept set and probabilities, computed directly from the definitions.
  std::vector<int> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<double> probs(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    probs[i] = std::exp((logits[i] - logits[order[0]]) / params.temperature);
  double top_k_mass = 0;
  for (int i = 0; i < params.top_k; ++i) top_k_mass += probs[order[i]];
  std::vector<bool> kept(logits.size(), false);
  double mass = 0;
  for (int i = 0; i < params.top_k && mass < params.top_p * top_k_mass; ++i) {
    mass += probs[order[i]];
    kept[order[i]] = probs[order[i]] >= params.min_p;
  }
  double kept_mass = 0;
  for (size_t i = 0; i < logits.size(); ++i) kept_mass += kept[i] ? probs[i] : 0;

  constexpr int kDraws = 200000;
  std::vector<int> counts(logits.size(), 0);
  for (int d = 0; d < kDraws; ++d)
    ++counts[sample_row_reference(logits, params, sample_uniform(12345, d))];
  for (size_t i = 0; i < logits.size(); ++i) {
    const double p = kept[i] ? probs[i] / kept_mass : 0.0;
    const double sigma = std::sqrt(kDraws * p * (1 - p)) + 1e-9;
    EXPECT_NEAR(counts[i], kDraws * p, 5 * sigma + 1) << "token " << i;
  }
}

TEST(SamplingReference, GreedyAndTopKOne) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> logits = random_logits(rng, 1000);
    logits[rng() % 1000] = 100.0f;  // a clear winner
    const int32_t best =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    EXPECT_EQ(sample_row_reference(logits, {0.0f, 0, 1.0f, 0.0f}, 0.5f), best);
    EXPECT_EQ(sample_row_reference(logits, {1.5f, 1, 1.0f, 0.0f}, 0.99f), best);
  }
}

TEST(SamplingReference, TopKKeepsTiesAndTopPIsMinimal) {
  // Logits 3, 2, 2, 1: top-k 2 keeps the tie at the 2nd place (3 tokens).
  const std::vector<float> logits{2.0f, 3.0f, 1.0f, 2.0f};
  std::vector<bool> seen(4, false);
  for (int d = 0; d < 4000; ++d)
    seen[sample_row_reference(logits, {1.0f, 2, 1.0f, 0.0f}, sample_uniform(7, d))] = true;
  EXPECT_TRUE(seen[0] && seen[1] && seen[3]);
  EXPECT_FALSE(seen[2]);
  // p = e^0, e^-1, e^-1, e^-2 over 1.8711: the top token alone has 0.534 >= 0.5.
  for (int d = 0; d < 1000; ++d)
    EXPECT_EQ(sample_row_reference(logits, {1.0f, 0, 0.5f, 0.0f}, sample_uniform(9, d)), 1);
}

TEST(SamplingReference, BackendDefaultRunsReferenceOnHost) {
  auto cpu = make_cpu_backend();
  std::vector<float> logits{0.0f, 5.0f, 1.0f, 4.0f, 9.0f, 2.0f};
  std::vector<float> temperature{0.0f, 1.0f}, top_p{1.0f, 0.7f}, min_p{0.0f, 0.0f};
  std::vector<int32_t> top_k{0, 3}, tokens{-1, -1};
  std::vector<int64_t> seeds{1, 2}, offsets{0, 5};
  cpu->sample(Tensor::view_of(logits.data(), DType::F32, {2, 3}),
              {Tensor::view_of(temperature.data(), DType::F32, {2}),
               Tensor::view_of(top_k.data(), DType::I32, {2}),
               Tensor::view_of(top_p.data(), DType::F32, {2}),
               Tensor::view_of(min_p.data(), DType::F32, {2}),
               Tensor::view_of(seeds.data(), DType::I64, {2}),
               Tensor::view_of(offsets.data(), DType::I64, {2})},
              Tensor::view_of(tokens.data(), DType::I32, {2}));
  EXPECT_EQ(tokens[0], 1);  // argmax of {0, 5, 1}
  const std::vector<float> row{4.0f, 9.0f, 2.0f};
  EXPECT_EQ(tokens[1], sample_row_reference(row, {1.0f, 3, 0.7f, 0.0f}, sample_uniform(2, 5)));
}

}  // namespace
}  // namespace hadron
