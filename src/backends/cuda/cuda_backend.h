// The CUDA backend (sm_90a, bf16 activations and weights, fp32 accumulation).
// Host code includes this header; it names no CUDA type.
#pragma once

#include <memory>

#include "ops/backend.h"

namespace hadron {

// A backend on GPU `device_idx`; throws hadron::Error when the device cannot be used.
std::unique_ptr<Backend> make_cuda_backend(int device_idx = 0);

// Number of visible CUDA devices (0 when there is no driver or no GPU).
int cuda_device_count();

}  // namespace hadron
