// Vector kernels shared by the CPU ops, each built twice: an x86-64-v3 version (AVX2, FMA) and
// a generic one, picked at load time from the CPU's features (HADRON_VECTOR_CLONES).
#pragma once

#include <cstdint>

// target_clones for a function with a vector body. The resolver that picks the clone is
// instrumented by ThreadSanitizer, which is not set up when it runs, so TSan builds keep the
// generic version only. (An "arch=haswell" clone would be picked by CPU model, so AMD and later
// Intel CPUs would run the generic one.)
#if defined(__SANITIZE_THREAD__)
#define HADRON_VECTOR_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HADRON_VECTOR_CLONES
#endif
#endif
#ifndef HADRON_VECTOR_CLONES
#define HADRON_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif

namespace hadron {

// x . y over n floats (fp32, vectorised: lanes summed at the end).
float dot_f32(const float* x, const float* y, int64_t n);
// x . w over n values, w in bf16 bits.
float dot_bf16(const float* x, const uint16_t* w, int64_t n);
// y += a * x over n floats.
void axpy_f32(float a, const float* x, float* y, int64_t n);

}  // namespace hadron
