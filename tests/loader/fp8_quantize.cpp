#include "fp8_quantize.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"

namespace hadron::testing {

uint8_t nearest_e4m3(float value) {
  // Codes 0..126 are the non-negative finite values in increasing order (127 is NaN).
  uint8_t best = 0;
  for (uint8_t code = 1; code < 127; ++code)
    if (std::abs(fp8_e4m3_to_f32(code) - std::abs(value)) <
        std::abs(fp8_e4m3_to_f32(best) - std::abs(value)))
      best = code;
  return value < 0 ? best | 0x80 : best;
}

Fp8Quantized quantize_fp8(const std::vector<float>& weight, int64_t rows, int64_t cols,
                          int64_t block_rows, int64_t block_cols, bool bf16_scales) {
  Fp8Quantized q;
  q.scale_rows = (rows + block_rows - 1) / block_rows;
  q.scale_cols = (cols + block_cols - 1) / block_cols;
  q.scales.assign(q.scale_rows * q.scale_cols, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& scale = q.scales[r / block_rows * q.scale_cols + c / block_cols];
      scale = std::max(scale, std::abs(weight[r * cols + c]) / 448.0f);
    }
  if (bf16_scales)
    for (float& scale : q.scales) {
      const float rounded = bf16_to_f32(f32_to_bf16(scale));
      scale = rounded >= scale ? rounded : bf16_to_f32(f32_to_bf16(scale) + 1);
    }
  q.codes.resize(weight.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float scale = q.scales[r / block_rows * q.scale_cols + c / block_cols];
      q.codes[r * cols + c] = nearest_e4m3(scale > 0 ? weight[r * cols + c] / scale : 0.0f);
    }
  return q;
}

}  // namespace hadron::testing
