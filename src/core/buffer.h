// Buffer: owning, move-only memory on one device, freed by the allocator that made it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>

#include "core/tensor.h"

namespace hadron {

class Buffer {
 public:
  using FreeFn = void (*)(void* data);

  Buffer() = default;
  Buffer(void* data, size_t bytes, Device device, FreeFn free_fn)
      : data_(data), bytes_(bytes), device_(device), free_fn_(free_fn) {}
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  // 256-byte aligned host memory, uninitialised.
  static Buffer host(size_t bytes);

  void reset();
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  // A contiguous tensor view over the start of this buffer.
  Tensor view(DType dtype, std::span<const int64_t> shape) const;
  Tensor view(DType dtype, std::initializer_list<int64_t> shape) const {
    return view(dtype, std::span<const int64_t>(shape.begin(), shape.size()));
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_ = Device::CPU;
  FreeFn free_fn_ = nullptr;
};

}  // namespace hadron
