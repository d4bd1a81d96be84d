#include "engine/sampler.h"

#include <algorithm>

#include "ops/sampling.h"

namespace hadron {

int32_t argmax(std::span<const float> values) {
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

int32_t Sampler::sample(std::span<const float> logits, uint64_t step) const {
  return sample_row_reference(logits, *params_, sample_uniform(seed_, step));
}

}  // namespace hadron
