#include "core/arena.h"

#include <algorithm>

#include "core/error.h"

namespace hadron {

Tensor Arena::alloc(DType dtype, std::initializer_list<int64_t> shape) {
  Tensor t = Tensor::view_of(nullptr, dtype, shape, buffer_.device());
  const size_t bytes = (t.nbytes() + kAlign - 1) / kAlign * kAlign;
  HADRON_CHECK(used_ + bytes <= buffer_.bytes(), "arena of {} bytes full: {} used, {} asked",
               buffer_.bytes(), used_, bytes);
  t.data = static_cast<char*>(buffer_.data()) + used_;
  used_ += bytes;
  high_water_ = std::max(high_water_, used_);
  return t;
}

}  // namespace hadron
