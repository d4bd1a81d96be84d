// Test helpers: a scratch folder and a safetensors writer laid out as the reference writer does
// (header padded with spaces to 8 bytes, tensors contiguous in the given order).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace hadron::testing {

struct TensorBytes {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;  // raw little-endian bytes
};

// A file with the given header text and data bytes; the length prefix is the header's size.
std::string safetensors_raw(const std::string& header, const std::string& data);
// A file with the given 8-byte length prefix followed by `rest`.
std::string with_length_prefix(uint64_t length, const std::string& rest);
// A valid file holding `tensors` in order, with optional __metadata__.
std::string safetensors_bytes(const std::vector<TensorBytes>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// A fresh folder under the system temp dir, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Writes `bytes` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& bytes) const;

 private:
  std::filesystem::path path_;
};

// The InputError message thrown by `action`, or "" when it succeeded. Any other exception fails.
template <typename Action>
std::string input_error_of(Action&& action);

}  // namespace hadron::testing

#include "core/error.h"

namespace hadron::testing {

template <typename Action>
std::string input_error_of(Action&& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace hadron::testing
