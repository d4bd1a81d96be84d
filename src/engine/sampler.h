// Token sampling for one sequence on the host, with the same counter-based semantics as
// Backend::sample (ops/sampling.h): a token depends only on the processed logits, the
// parameters, the sequence's seed and its step, never on batch mates or on recomputation.
#pragma once

#include <cstdint>
#include <span>

#include "engine/sampling_params.h"

namespace hadron {

class Sampler {
 public:
  Sampler(const SamplingParams& params, uint64_t seed) : params_(&params), seed_(seed) {}

  // Picks a token from processed logits [vocab] for the sequence's `step`-th output token.
  int32_t sample(std::span<const float> logits, uint64_t step) const;
  uint64_t seed() const { return seed_; }

 private:
  const SamplingParams* params_;
  uint64_t seed_;
};

// Index of the largest value; the lowest index wins ties.
int32_t argmax(std::span<const float> values);

}  // namespace hadron
