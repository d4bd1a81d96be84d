// MXFP4 (OCP microscaling FP4) as gpt-oss checkpoints store expert weights: each row of a
// [rows, cols] matrix is cols/32 blocks of 16 bytes (two e2m1 codes a byte, the even element
// in the low nibble) with one e8m0 scale byte per block (value 2^(scale - 127)).
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "ops/backend.h"

namespace hadron {

// The value of one e2m1 code (0..15).
float fp4_e2m1_value(uint8_t code);

// blocks: U8 [..., rows, cols/32, 16]; scales: U8 [..., rows, cols/32], on any backend.
// Returns the decoded matrix [n_rows_total, cols] in `dtype` (exact in BF16 and F32) in
// backend memory; `out` views it.
Buffer dequantize_mxfp4(Backend& backend, const Tensor& blocks, const Tensor& scales, DType dtype,
                        Tensor& out);

}  // namespace hadron
