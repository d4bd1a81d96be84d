#include "core/tensor.h"

#include "core/error.h"

namespace hadron {

Tensor Tensor::view_of(void* data, DType dtype, std::span<const int64_t> shape, Device device) {
  HADRON_CHECK(shape.size() <= kMaxDims, "at most {} dims, got {}", kMaxDims, shape.size());
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.device = device;
  t.ndim = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    HADRON_CHECK(shape[i] >= 0, "negative dimension {}", shape[i]);
    t.shape[i] = shape[i];
    t.strides[i] = stride;
    stride *= shape[i];
  }
  return t;
}

int64_t Tensor::size(int dim) const {
  const int index = dim < 0 ? dim + ndim : dim;
  HADRON_CHECK(index >= 0 && index < ndim, "dim {} out of range for {}", dim, describe());
  return shape[index];
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  return n;
}

bool Tensor::is_contiguous() const {
  int64_t stride = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != stride) return false;
    stride *= shape[i];
  }
  return true;
}

Tensor Tensor::reshape(std::initializer_list<int64_t> new_shape) const {
  HADRON_CHECK(is_contiguous(), "reshape of a non-contiguous {}", describe());
  Tensor t = view_of(data, dtype, new_shape, device);
  HADRON_CHECK(t.numel() == numel(), "reshape {} to {} elements", describe(), t.numel());
  return t;
}

Tensor Tensor::slice_rows(int64_t begin, int64_t end) const {
  HADRON_CHECK(ndim >= 1 && 0 <= begin && begin <= end && end <= shape[0], "rows [{}, {}) of {}",
               begin, end, describe());
  Tensor t = *this;
  t.shape[0] = end - begin;
  t.data = static_cast<char*>(data) + begin * strides[0] * static_cast<int64_t>(dtype_size(dtype));
  return t;
}

std::string Tensor::describe() const {
  std::string text = std::string(dtype_name(dtype)) + "[";
  for (int i = 0; i < ndim; ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (device == Device::CPU ? "] cpu" : "] cuda");
}

}  // namespace hadron
