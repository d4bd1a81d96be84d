// A linear layer's product whatever form the loader left its weight in: bf16/f32 through
// Backend::linear, or FP8 (core/fp8.h) through Backend::fp8_linear after quantizing the
// activations per token group as the weight asks.
#pragma once

#include "core/arena.h"
#include "core/fp8.h"
#include "ops/backend.h"

namespace hadron {

// out = x @ weight^T (+ bias). x: [T, K] contiguous; weight: [N, K] (the FP8 codes when fp8 is
// defined); bias: [N] or undefined; out: [T, N]. The FP8 path's scratch (codes [T, K], scales
// [T, ceil(K / group)]) comes from the arena and is released before returning.
void project(Backend& backend, const Tensor& x, const Tensor& weight, const Fp8Weight& fp8,
             const Tensor& bias, Arena& arena, const Tensor& out);

}  // namespace hadron
