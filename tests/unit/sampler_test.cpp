#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/sampler.h"

namespace hadron {
namespace {

std::vector<float> random_logits(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> logits(n);
  for (float& x : logits) x = dist(rng);
  return logits;
}

TEST(Sampler, GreedyIsArgmax) {
  const std::vector<float> logits = random_logits(1000, 1);
  Sampler greedy({});
  EXPECT_EQ(greedy.sample(logits), argmax(logits));
  Sampler top1({1.0f, 1, 1.0f, 0.0f, 5});
  EXPECT_EQ(top1.sample(logits), argmax(logits));
}

TEST(Sampler, SeededSamplingReproducesAndVaries) {
  const std::vector<float> logits = random_logits(50, 2);
  const SamplingParams params{1.0f, 0, 1.0f, 0.0f, 42};
  Sampler a(params), b(params), c({1.0f, 0, 1.0f, 0.0f, 43});
  std::vector<int32_t> from_a, from_b, from_c;
  for (int i = 0; i < 200; ++i) {
    from_a.push_back(a.sample(logits));
    from_b.push_back(b.sample(logits));
    from_c.push_back(c.sample(logits));
  }
  EXPECT_EQ(from_a, from_b);
  EXPECT_NE(from_a, from_c);
}

TEST(Sampler, TopKAndTopPRestrictTheCandidates) {
  const std::vector<float> logits = {0.0f, 5.0f, 4.9f, 1.0f, 4.8f, -3.0f};
  Sampler top_k({1.0f, 2, 1.0f, 0.0f, 9});
  Sampler top_p({1.0f, 0, 0.5f, 0.0f, 9});
  Sampler min_p({1.0f, 0, 1.0f, 0.5f, 9});
  std::map<int32_t, int> k_counts, p_counts, m_counts;
  for (int i = 0; i < 2000; ++i) {
    k_counts[top_k.sample(logits)]++;
    p_counts[top_p.sample(logits)]++;
    m_counts[min_p.sample(logits)]++;
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
