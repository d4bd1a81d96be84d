// Host-side sampling from fp32 logits: greedy, or seeded temperature / top-k / top-p / min-p.
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include "engine/sampling_params.h"

namespace hadron {

// Draws tokens for one sequence with its own generator, so a seeded request's tokens do
// not depend on its batch mates.
class Sampler {
 public:
  Sampler(const SamplingParams& params, uint64_t seed) : params_(&params), rng_(seed) {}

  // Picks a token id from processed logits [vocab] (penalties and bias already applied).
  int32_t sample(std::span<const float> logits);

 private:
  const SamplingParams* params_;
  std::mt19937_64 rng_;
};

// Index of the largest value; the lowest index wins ties.
int32_t argmax(std::span<const float> values);

}  // namespace hadron
