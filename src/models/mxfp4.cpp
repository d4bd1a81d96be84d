#include "models/mxfp4.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
namespace {

constexpr int64_t kBlockValues = 32;  // values per scale
constexpr int64_t kBlockBytes = 16;

// Host copy of a U8 tensor on any backend.
std::vector<uint8_t> host_bytes(Backend& backend, const Tensor& t) {
  std::vector<uint8_t> bytes(t.numel());
  backend.copy(t, Tensor::view_of(bytes.data(), DType::U8, {t.numel()}));
  return bytes;
}

}  // namespace

float fp4_e2m1_value(uint8_t code) {
  static constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float magnitude = kMagnitudes[code & 7];
  return (code & 8) != 0 ? -magnitude : magnitude;
}

Buffer dequantize_mxfp4(Backend& backend, const Tensor& blocks, const Tensor& scales, DType dtype,
                        Tensor& out) {
  HADRON_CHECK(blocks.dtype == DType::U8 && scales.dtype == DType::U8 && blocks.ndim >= 3 &&
                   blocks.size(-1) == kBlockBytes && scales.numel() * kBlockBytes == blocks.numel(),
               "MXFP4 blocks {} with scales {}", blocks.describe(), scales.describe());
  const int64_t n_blocks_per_row = blocks.size(-2), cols = n_blocks_per_row * kBlockValues;
  const int64_t rows = scales.numel() / n_blocks_per_row;
  const std::vector<uint8_t> packed = host_bytes(backend, blocks);
  const std::vector<uint8_t> exponents = host_bytes(backend, scales);
  Buffer host = Buffer::host(rows * cols * dtype_size(dtype));
  ThreadPool::global().parallel_for(rows, [&](int64_t begin, int64_t end) {
    std::vector<float> row(cols);
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t b = 0; b < n_blocks_per_row; ++b) {
        const int64_t block = r * n_blocks_per_row + b;
        const float scale = std::ldexp(1.0f, static_cast<int>(exponents[block]) - 127);
        for (int64_t i = 0; i < kBlockBytes; ++i) {
          const uint8_t byte = packed[block * kBlockBytes + i];
          row[b * kBlockValues + 2 * i] = fp4_e2m1_value(byte & 0xF) * scale;
          row[b * kBlockValues + 2 * i + 1] = fp4_e2m1_value(byte >> 4) * scale;
        }
      }
      convert_from_f32(row.data(), static_cast<char*>(host.data()) + r * cols * dtype_size(dtype),
                       dtype, cols);
    }
  });
  Buffer device = backend.allocate(host.bytes());
  out = device.view(dtype, {rows, cols});
  backend.copy(host.view(dtype, {rows, cols}), out);
  return device;
}

}  // namespace hadron
