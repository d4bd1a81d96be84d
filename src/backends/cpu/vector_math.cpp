#include "backends/cpu/vector_math.h"

#include "core/dtype.h"

namespace hadron {

HADRON_VECTOR_CLONES
float dot_f32(const float* x, const float* y, int64_t n) {
  float acc = 0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += x[i] * y[i];
  return acc;
}

HADRON_VECTOR_CLONES
float dot_bf16(const float* x, const uint16_t* w, int64_t n) {
  float acc = 0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += x[i] * bits_to_f32(uint32_t{w[i]} << 16);
  return acc;
}

HADRON_VECTOR_CLONES
void axpy_f32(float a, const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace hadron
