#include "engine/sampler.h"

#include <algorithm>

#include "backends/cpu/sampling.h"
#include "ops/sampling.h"

namespace hadron {

int32_t argmax(std::span<const float> values) {
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

int32_t Sampler::sample(std::span<const float> logits, uint64_t step) const {
  const SampleRowParams row{params_->temperature, params_->top_k, params_->top_p, params_->min_p};
  return sample_row_reference(logits, row, sample_uniform(seed_, step));
}

}  // namespace hadron
