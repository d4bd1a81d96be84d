// Host-side sampling from fp32 logits: greedy, or seeded temperature / top-k / top-p / min-p.
#pragma once

#include <cstdint>
#include <random>
#include <span>

namespace hadron {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy
  int top_k = 0;             // 0: off
  float top_p = 1.0f;
  float min_p = 0.0f;
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

  // Picks a token id from logits [vocab].
  int32_t sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

// Index of the largest value; the lowest index wins ties.
int32_t argmax(std::span<const float> values);

}  // namespace hadron
