// A weight spec's elements from its checkpoint sources: converted to a float dtype (FP8
// sources dequantized), copied as FP8 codes, or quantized to FP8 per output channel at load.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "loader/fp8_weights.h"
#include "loader/weight_plan.h"

namespace hadron {

// A checkpoint tensor feeding a spec, with its scales when it is FP8, and the slice of it this
// rank loads.
struct SpecSource {
  const TensorInfo* info;
  std::optional<Fp8Scales> fp8;
  ShardSlice slice;
};

// Writes elements [begin, end) of a spec, its sources' slices concatenated, to dst in dtype
// (F32, F16 or BF16; FP8 sources times their scales).
void fill_from_sources(const std::vector<SpecSource>& sources, int64_t begin, int64_t end,
                       void* dst, DType dtype);

// How a spec is kept in FP8: its scales, the activations' quantization, and whether its codes
// are the checkpoint's (copied) or made at load from the sources' values.
struct KeptFp8 {
  Fp8Layout layout;
  bool quantize = false;
  int64_t act_group = 0;
  bool ue8m0 = false;
};

// Whether the spec stays FP8 (WeightSpec::fp8 set): checkpoint FP8 sources when
// keep_checkpoint_fp8 and their scales merge (merge_fp8_scales), other float sources when
// quantize_others (per-channel scales from the values, read once here). nullopt: loaded in the
// backend's weight dtype.
std::optional<KeptFp8> plan_kept_fp8(const WeightSpec& spec, const std::vector<SpecSource>& sources,
                                     bool keep_checkpoint_fp8, bool quantize_others,
                                     const QuantConfig& quant);

// As plan_kept_fp8 for dummy weights of a config: kept when its quantization_config says fp8
// (block-scaled by its weight_block_size, or per-channel without one) and keep_checkpoint_fp8,
// or per-channel under quantize_others; every scale value_bound / 448, so that the codes of
// values in (-value_bound, value_bound) span e4m3's range.
std::optional<KeptFp8> plan_dummy_fp8(const WeightSpec& spec, const QuantConfig& quant,
                                      bool keep_checkpoint_fp8, bool quantize_others,
                                      float value_bound);

// Writes elements [begin, end) of a kept spec to dst as e4m3 codes.
void fill_fp8_codes(const std::vector<SpecSource>& sources, const KeptFp8& kept, int64_t cols,
                    int64_t begin, int64_t end, void* dst);

}  // namespace hadron
