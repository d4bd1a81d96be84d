// Fills a WeightPlan from a checkpoint, or with dummy values, into backend memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "loader/hf_config.h"
#include "loader/safetensors.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

struct LoadedWeights {
  std::vector<Buffer> buffers;  // one per weight spec, owning the targets' memory
  size_t bytes = 0;
};

// Both loaders fill the plan in 16M-element chunks on the thread pool: on the CPU in place,
// on a GPU through per-thread pinned staging buffers whose asynchronous copies overlap the
// next chunk's conversion (mmap -> dtype conversion -> pinned -> device). show_progress
// draws a progress bar on stderr (a line per quarter when stderr is not a terminal).

// Throws InputError when weights of weight_bytes cannot fit in the free_bytes the device has
// left (nullopt: unknown, no check), before any of them is allocated.
void check_weights_fit(size_t weight_bytes, std::optional<size_t> free_bytes,
                       const std::string& device);

// How weights that may be kept in FP8 (WeightSpec::fp8) load.
enum class Quantization : uint8_t {
  // As the checkpoint: FP8 weights stay FP8 where the backend's weight_dtype keeps F8_E4M3,
  // else they are dequantized; other weights load in the backend's weight dtype.
  kNone,
  // `--quantization fp8` (as vLLM's): FP8 checkpoint weights stay FP8, and other float
  // weights are quantized at load to e4m3 with per-output-channel scales. Needs a backend
  // with the FP8 linear.
  kFp8,
};

// Loads every spec (first checking that they fit the backend's free memory). Throws
// InputError listing every declared tensor that is missing or has the wrong shape, and every
// checkpoint tensor nobody used (unless the plan allows it). FP8 weights with scales beside
// them (loader/fp8_weights.h) are dequantized or kept (see Quantization); `quant` gives their
// block size and scale format.
LoadedWeights load_weights(const WeightPlan& plan, const Checkpoint& checkpoint, Backend& backend,
                           bool show_progress = false, const QuantConfig& quant = {},
                           Quantization quantization = Quantization::kNone);

// Fills every spec with seeded random values in the backend's weight dtype for
// `checkpoint_dtype`: matrices U(-1/sqrt(fan_in), 1/sqrt(fan_in)), vectors 1 + U(-0.1, 0.1).
// Specs that may be FP8 get those values as e4m3 codes under uniform scales, in the layout a
// checkpoint of `quant` would have (block-scaled for quant_method fp8 with weight_block_size),
// under the same rule as load_weights (Quantization).
LoadedWeights load_dummy_weights(const WeightPlan& plan, Backend& backend, DType checkpoint_dtype,
                                 uint64_t seed, bool show_progress = false,
                                 const QuantConfig& quant = {},
                                 Quantization quantization = Quantization::kNone);

// The progress bar's amount, "0.3 of 1.2 GB, 2.1 GB/s", in GB, MB or kB as the total needs, so
// that a small model's progress does not read "0.0 of 0.0 GB".
std::string load_progress_amount(size_t done_bytes, size_t total_bytes, double seconds);

}  // namespace hadron
