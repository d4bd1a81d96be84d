// Random inputs and host tensor views for the CPU reference tests (CPU only, no GPU).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

#include "core/tensor.h"

namespace hadron::testing {

inline std::vector<float> normal_floats(std::mt19937_64& rng, int64_t n, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

inline Tensor f32(std::vector<float>& v, std::initializer_list<int64_t> shape) {
  return Tensor::view_of(v.data(), DType::F32, shape);
}
inline Tensor i32(std::vector<int32_t>& v, std::initializer_list<int64_t> shape) {
  return Tensor::view_of(v.data(), DType::I32, shape);
}

}  // namespace hadron::testing
