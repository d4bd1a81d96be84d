// Arena: a bump allocator of tensors over one Buffer, reset once per forward step.
// Records its high-water mark, which sizes activation memory on the GPU.
#pragma once

#include <initializer_list>

#include "core/buffer.h"

namespace hadron {

class Arena {
 public:
  Arena() = default;
  explicit Arena(Buffer buffer) : buffer_(std::move(buffer)) {}

  // A tensor of the given shape; throws Error when the arena is full.
  Tensor alloc(DType dtype, std::initializer_list<int64_t> shape);
  void reset() { used_ = 0; }
  // Frees everything allocated after `mark` (a value of used()).
  void rewind(size_t mark) { used_ = mark; }
  size_t used() const { return used_; }
  size_t high_water() const { return high_water_; }
  size_t capacity() const { return buffer_.bytes(); }

 private:
  static constexpr size_t kAlign = 256;
  Buffer buffer_;
  size_t used_ = 0;
  size_t high_water_ = 0;
};

}  // namespace hadron
