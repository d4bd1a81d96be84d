// FP8 checkpoints: F8_E4M3 weights with a scale tensor beside them (w = q x s), dequantized at
// load into the backend's weight dtype, or kept as codes and scales for Backend::fp8_linear
// where the model allows it (WeightSpec::fp8) and the load asks for it (ADR 0014).
//
// A weight is FP8 when its dtype is F8_E4M3 and `<prefix>.weight_scale_inv` (block-scaled,
// quant_method fp8: despite its name the multiplier) or `<prefix>.weight_scale`
// (compressed-tensors) sits beside `<prefix>.weight`; modules_to_not_convert is advisory only.
// Scales are F32 or BF16, shaped [1] or [] (per tensor), [out, 1] or [out] (per channel), or
// [ceil(out / b0), ceil(in / b1)] for blocks of b0 x b1 (weight_block_size, default [128, 128]).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loader/hf_config.h"
#include "loader/safetensors.h"

namespace hadron {

// The scales of one FP8 weight, widened to f32: [n_row_blocks, n_col_blocks] row-major.
struct Fp8Scales {
  const TensorInfo* scale = nullptr;  // the checkpoint tensor they came from
  std::vector<float> values;
  int64_t cols = 0;        // of the weight (its elements past dim 0)
  int64_t block_rows = 0;  // weight rows per scale row
  int64_t block_cols = 0;  // weight columns per scale column
};

// The scale tensor beside `weight` when it is F8_E4M3, else nullptr.
const TensorInfo* find_fp8_scale(const Checkpoint& checkpoint, const TensorInfo& weight);

// Checkpoint tensors an FP8 weight brings along that the loader consumes or may drop: its
// scale and a static activation scale (`input_scale`; activations stay in bf16/f32 here).
std::vector<std::string> fp8_companion_names(const std::string& weight_name);

// Why `weight` cannot be loaded as FP8 ("" when it can): a scale of unexpected shape or dtype,
// or an F8_E4M3 weight with no scale under a quantization_config that promises them.
std::string fp8_problem(const Checkpoint& checkpoint, const TensorInfo& weight,
                        const QuantConfig& quant);

// The scales of `weight` (nullopt when it is not FP8); fp8_problem must have returned "".
std::optional<Fp8Scales> read_fp8_scales(const Checkpoint& checkpoint, const TensorInfo& weight,
                                         const QuantConfig& quant);

// Writes elements [begin, end) of the FP8 `weight`, times their scales, to dst in `dst_dtype`.
void dequantize_fp8(const TensorInfo& weight, const Fp8Scales& scales, int64_t begin, int64_t end,
                    void* dst, DType dst_dtype);

// The scales of one weight as kept in FP8: [scale_rows, scale_cols] row-major, each covering
// block_n x block_k of the weight (core/fp8.h's Fp8Weight).
struct Fp8Layout {
  std::vector<float> scales;
  int64_t scale_rows = 0, scale_cols = 0, block_n = 0, block_k = 0;
};

// The layout of a weight merged along dim 0 from parts (each part's scales and its rows), as
// stored; per-tensor scales of several parts become per-channel ones. nullopt when the parts'
// blocks differ or a block would straddle a seam (rows not a multiple of block_n before the
// last part): such a weight is dequantized instead.
std::optional<Fp8Layout> merge_fp8_scales(const std::vector<const Fp8Scales*>& parts,
                                          const std::vector<int64_t>& part_rows);

// Per-output-channel scales of a [rows, cols] f32 weight for online quantization (vLLM's
// `--quantization fp8`): scale[r] = max(amax(row r), floor) / 448.
Fp8Layout per_channel_fp8_scales(const float* weight, int64_t rows, int64_t cols);

}  // namespace hadron
