// The host reference of token sampling (semantics in ops/sampling.h).
#pragma once

#include <cstdint>
#include <span>

namespace hadron {

struct SampleRowParams {
  float temperature = 0;
  int32_t top_k = 0;
  float top_p = 1;
  float min_p = 0;
};

// Picks one token from a row of logits with the uniform draw u in [0, 1).
int32_t sample_row_reference(std::span<const float> logits, const SampleRowParams& params, float u);

}  // namespace hadron
