// Token sampling shared by every backend: per-row parameters and the counter-based random
// draw, so a row's token depends only on its logits, its parameters, its seed and its step
// (never on batch mates or the backend's thread layout).
//
// Semantics, per row of fp32 logits l[0, V):
//   greedy when temperature <= 0 or top_k == 1: the first index of the largest logit.
//   otherwise p_i = exp((l_i - max l) / temperature), and a token is kept when
//     top-k  (0 < top_k < V): l_i >= the top_k-th largest logit (ties kept);
//     top-p  (top_p < 1):     l_i >= the largest value t such that the kept-by-top-k mass of
//                             {l >= t} reaches top_p times the kept-by-top-k mass;
//     min-p  (min_p > 0):     p_i >= min_p (p of the top token is 1).
//   u = sample_uniform(seed, offset) in [0, 1); the token is the first kept index i (in
//   vocabulary order) whose running kept mass exceeds u times the total kept mass.
#pragma once

#include <cstdint>
#include <span>

#include "core/tensor.h"

#if defined(__CUDACC__)
#define HADRON_HOST_DEVICE __host__ __device__
#else
#define HADRON_HOST_DEVICE
#endif

namespace hadron {

// One row's parameters: the record every sampler reads (the engine's SamplingParams extends it;
// SamplingBatch holds it as columns).
struct SampleRowParams {
  float temperature = 0;  // <= 0: greedy
  int32_t top_k = 0;      // <= 0: off
  float top_p = 1;        // >= 1: off
  float min_p = 0;        // <= 0: off
};

// Device tensors, one entry per row of logits: SampleRowParams as columns, and the draw's
// seed and counter.
struct SamplingBatch {
  Tensor temperature;  // F32 [R]
  Tensor top_k;        // I32 [R]; <= 0: off
  Tensor top_p;        // F32 [R]; >= 1: off
  Tensor min_p;        // F32 [R]; <= 0: off
  Tensor seeds;        // I64 [R] (bits of a uint64)
  Tensor offsets;      // I64 [R] the request's step counter: a fresh draw per step
};

HADRON_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform float in [0, 1) with 24 random bits, from (seed, offset).
HADRON_HOST_DEVICE inline float sample_uniform(uint64_t seed, uint64_t offset) {
  return static_cast<float>(mix64(seed ^ mix64(offset)) >> 40) * (1.0f / 16777216.0f);
}

// Maps a float to a uint32 whose unsigned order is the float order.
HADRON_HOST_DEVICE inline uint32_t ordered_key(uint32_t float_bits) {
  return (float_bits & 0x80000000u) ? ~float_bits : float_bits | 0x80000000u;
}

// The host reference: picks one token from a row of logits with the uniform draw u in [0, 1).
// Backend::sample's default and the engine's per-sequence Sampler run it.
int32_t sample_row_reference(std::span<const float> logits, const SampleRowParams& params, float u);

}  // namespace hadron
