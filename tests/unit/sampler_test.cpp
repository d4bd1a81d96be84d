#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace hadron {
namespace {

std::vector<float> random_logits(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> logits(n);
  for (float& x : logits) x = dist(rng);
  return logits;
}

SamplingParams params_of(float temperature, int top_k, float top_p, float min_p) {
  SamplingParams params;
  params.temperature = temperature;
  params.top_k = top_k;
  params.top_p = top_p;
  params.min_p = min_p;
  return params;
}

TEST(Sampler, GreedyIsArgmax) {
  const std::vector<float> logits = random_logits(1000, 1);
  const SamplingParams greedy_params, top1_params = params_of(1.0f, 1, 1.0f, 0.0f);
  Sampler greedy(greedy_params, 0);
  EXPECT_EQ(greedy.sample(logits, 0), argmax(logits));
  Sampler top1(top1_params, 5);
  EXPECT_EQ(top1.sample(logits, 3), argmax(logits));
}

TEST(Sampler, SeededSamplingReproducesAndVaries) {
  const std::vector<float> logits = random_logits(50, 2);
  const SamplingParams params = params_of(1.0f, 0, 1.0f, 0.0f);
  Sampler a(params, 42), b(params, 42), c(params, 43);
  std::vector<int32_t> from_a, from_b, from_c;
  for (int i = 0; i < 200; ++i) {
    from_a.push_back(a.sample(logits, i));
    from_b.push_back(b.sample(logits, i));
    from_c.push_back(c.sample(logits, i));
  }
  EXPECT_EQ(from_a, from_b);
  EXPECT_NE(from_a, from_c);
}

TEST(Sampler, TopKAndTopPRestrictTheCandidates) {
  const std::vector<float> logits = {0.0f, 5.0f, 4.9f, 1.0f, 4.8f, -3.0f};
  const SamplingParams k_params = params_of(1.0f, 2, 1.0f, 0.0f);
  const SamplingParams p_params = params_of(1.0f, 0, 0.5f, 0.0f);
  const SamplingParams m_params = params_of(1.0f, 0, 1.0f, 0.5f);
  Sampler top_k(k_params, 9), top_p(p_params, 9), min_p(m_params, 9);
  std::map<int32_t, int> k_counts, p_counts, m_counts;
  for (int i = 0; i < 2000; ++i) {
    k_counts[top_k.sample(logits, i)]++;
    p_counts[top_p.sample(logits, i)]++;
    m_counts[min_p.sample(logits, i)]++;
  }
  for (const auto& [id, count] : k_counts) EXPECT_TRUE(id == 1 || id == 2) << id;
  // The top token holds ~35% of the mass, so top_p = 0.5 keeps the top two.
  for (const auto& [id, count] : p_counts) EXPECT_TRUE(id == 1 || id == 2) << id;
  // min_p = 0.5 keeps tokens within log(2) of the best logit: 1, 2, 4.
  for (const auto& [id, count] : m_counts) EXPECT_TRUE(id == 1 || id == 2 || id == 4) << id;
  EXPECT_GT(k_counts[2], 700);  // both candidates are drawn in proportion (~48% for id 2)
}

}  // namespace
}  // namespace hadron
