#include "core/buffer.h"

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace hadron {

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    bytes_ = other.bytes_;
    device_ = other.device_;
    free_fn_ = other.free_fn_;
    other.data_ = nullptr;
    other.bytes_ = 0;
    other.free_fn_ = nullptr;
  }
  return *this;
}

Buffer Buffer::host(size_t bytes) {
  constexpr size_t kAlign = 256;  // as the arena aligns its tensors
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* data = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (data == nullptr) throw std::bad_alloc();
  return Buffer(data, bytes, Device::CPU, [](void* p) { std::free(p); });
}

void Buffer::reset() {
  if (data_ != nullptr && free_fn_ != nullptr) free_fn_(data_);
  data_ = nullptr;
  bytes_ = 0;
}

Tensor Buffer::view(DType dtype, std::span<const int64_t> shape) const {
  Tensor t = Tensor::view_of(data_, dtype, shape, device_);
  HADRON_CHECK(t.nbytes() <= bytes_, "view {} needs {} bytes, buffer has {}", t.describe(),
               t.nbytes(), bytes_);
  return t;
}

}  // namespace hadron
