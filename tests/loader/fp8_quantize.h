// Test helper: FP8 (e4m3) quantization as the checkpoint toolkits do it, one scale per block of
// a 2-D weight, scale = max |w| over the block / 448 (e4m3's largest finite value).
#pragma once

#include <cstdint>
#include <vector>

namespace hadron::testing {

struct Fp8Quantized {
  std::vector<uint8_t> codes;  // [rows, cols] e4m3
  std::vector<float> scales;   // [ceil(rows / block_rows), ceil(cols / block_cols)]
  int64_t scale_rows = 0, scale_cols = 0;
};

// The e4m3 code nearest to `value` (which must lie within +-448).
uint8_t nearest_e4m3(float value);

// Quantizes `weight` [rows, cols]: block (rows, cols) is per tensor, (1, cols) per channel.
// bf16_scales: scales rounded up to bf16 values (as stored in BF16) before the codes are chosen.
Fp8Quantized quantize_fp8(const std::vector<float>& weight, int64_t rows, int64_t cols,
                          int64_t block_rows, int64_t block_cols, bool bf16_scales = false);

}  // namespace hadron::testing
