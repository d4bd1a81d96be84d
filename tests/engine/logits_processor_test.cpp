#include "engine/logits_processor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hadron {
namespace {

TEST(LogitsProcessor, PenaltiesBiasAndMinTokens) {
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.5f, 3.0f};
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.presence_penalty = 0.5f;
  params.frequency_penalty = 0.25f;
  params.logit_bias = {{3, 10.0f}};
  params.min_tokens = 5;
  params.stop_token_ids = {2};
  const std::vector<int32_t> prompt = {0, 1}, output = {1, 1, 3};
  const std::vector<int32_t> eos = {4};
  process_logits(logits, params, prompt, output, eos);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);                       // seen, positive: divided
  EXPECT_FLOAT_EQ(logits[1], -4.0f - 0.5f - 2 * 0.25f);   // seen twice in output
  EXPECT_TRUE(std::isinf(logits[2]) && logits[2] < 0);    // stop id before min_tokens
  EXPECT_FLOAT_EQ(logits[3], 0.25f - 0.5f - 0.25f + 10);  // penalised once, then biased
  EXPECT_TRUE(std::isinf(logits[4]) && logits[4] < 0);    // eos before min_tokens
}

TEST(LogitsProcessor, LogprobsAreLogSoftmax) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  const Logprobs lp = compute_logprobs(logits, 0, 2);
  const double norm = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(lp.chosen.logprob, 1.0 - norm, 1e-6);
  ASSERT_EQ(lp.top.size(), 2u);
  EXPECT_EQ(lp.top[0].token, 2);
  EXPECT_NEAR(lp.top[1].logprob, 2.0 - norm, 1e-6);
}

}  // namespace
}  // namespace hadron
