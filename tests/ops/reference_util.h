// Helpers of the CPU-only reference tests: host views and random inputs.
#pragma once

#include <initializer_list>
#include <random>
#include <vector>

#include "core/tensor.h"

namespace hadron {

inline Tensor view(std::vector<float>& v, std::initializer_list<int64_t> shape) {
  return Tensor::view_of(v.data(), DType::F32, shape);
}

inline std::vector<float> normal_floats(std::mt19937_64& rng, int64_t n, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

}  // namespace hadron
