// Fills a WeightPlan from a checkpoint, or with dummy values, into backend memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "loader/safetensors.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

struct LoadedWeights {
  std::vector<Buffer> buffers;  // one per weight spec, owning the targets' memory
  size_t bytes = 0;
};

// Loads every spec. Throws InputError listing every declared tensor that is missing or has
// the wrong shape, and every checkpoint tensor nobody used (unless the plan allows it).
LoadedWeights load_weights(const WeightPlan& plan, const Checkpoint& checkpoint,
                           Backend& backend);

// Fills every spec with seeded random values in the backend's weight dtype for
// `checkpoint_dtype`: matrices U(-1/sqrt(fan_in), 1/sqrt(fan_in)), vectors 1 + U(-0.1, 0.1).
LoadedWeights load_dummy_weights(const WeightPlan& plan, Backend& backend,
                                 DType checkpoint_dtype, uint64_t seed);

}  // namespace hadron
