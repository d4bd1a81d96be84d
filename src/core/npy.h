// Reading and writing numpy .npy files (format version 1.0, little-endian, C order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hadron {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // float32 data, row-major
};

// Writes float32 values with the given shape. Throws InputError when the file cannot be written.
void write_npy(const std::string& path, const float* values, const std::vector<int64_t>& shape);
// Reads a '<f4' C-order array. Throws InputError naming the file on anything else.
NpyArray read_npy(const std::string& path);

}  // namespace hadron
