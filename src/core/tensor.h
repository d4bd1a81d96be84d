// Tensor: a non-owning view {data, dtype, shape, strides, device}. Owning memory is a Buffer.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "core/dtype.h"

namespace hadron {

enum class Device : uint8_t { CPU, CUDA };

inline constexpr int kMaxDims = 4;

struct Tensor {
  void* data = nullptr;
  DType dtype = DType::F32;
  Device device = Device::CPU;
  int ndim = 0;
  std::array<int64_t, kMaxDims> shape{};
  std::array<int64_t, kMaxDims> strides{};  // in elements, not bytes

  // A contiguous row-major view of `data`.
  static Tensor view_of(void* data, DType dtype, std::span<const int64_t> shape,
                        Device device = Device::CPU);
  static Tensor view_of(void* data, DType dtype, std::initializer_list<int64_t> shape,
                        Device device = Device::CPU) {
    return view_of(data, dtype, std::span<const int64_t>(shape.begin(), shape.size()), device);
  }

  bool defined() const { return data != nullptr; }
  // Size of dimension `dim`; negative counts from the end.
  int64_t size(int dim) const;
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  bool is_contiguous() const;

  // Same memory, new contiguous shape with the same element count.
  Tensor reshape(std::initializer_list<int64_t> new_shape) const;
  // Rows [begin, end) of dimension 0.
  Tensor slice_rows(int64_t begin, int64_t end) const;

  template <typename T>
  T* ptr() const {
    return static_cast<T*>(data);
  }

  std::string describe() const;  // "BF16[4096, 1024] cpu"
};

}  // namespace hadron
