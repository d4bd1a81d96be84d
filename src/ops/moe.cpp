#include "ops/moe.h"

#include <cmath>

namespace hadron {

float fp4_e2m1_value(uint8_t code) {
  static constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float magnitude = kMagnitudes[code & 7];
  return (code & 8) != 0 ? -magnitude : magnitude;
}

float e8m0_value(uint8_t scale) { return std::ldexp(1.0f, static_cast<int>(scale) - 127); }

void decode_mxfp4_rows(const uint8_t* blocks, const uint8_t* scales, int64_t n_rows, int64_t cols,
                       float* out) {
  constexpr int64_t kBlockValues = 32, kBlockBytes = 16;
  const int64_t n_blocks = n_rows * cols / kBlockValues;
  for (int64_t block = 0; block < n_blocks; ++block) {
    const float scale = e8m0_value(scales[block]);
    const uint8_t* bytes = blocks + block * kBlockBytes;
    float* values = out + block * kBlockValues;
    for (int64_t i = 0; i < kBlockBytes; ++i) {
      values[2 * i] = fp4_e2m1_value(bytes[i] & 0xF) * scale;
      values[2 * i + 1] = fp4_e2m1_value(bytes[i] >> 4) * scale;
    }
  }
}

}  // namespace hadron
