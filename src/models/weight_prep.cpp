#include "models/weight_prep.h"

#include <cstring>

#include "core/error.h"

namespace hadron {

Tensor offset_copy(Backend& backend, const Tensor& weight, float offset, DType dtype,
                   Buffer& storage) {
  const int64_t n = weight.numel();
  Buffer stored = Buffer::host(weight.nbytes());
  backend.copy(weight, stored.view(weight.dtype, {n}));
  std::vector<float> values(n);
  convert_to_f32(stored.data(), weight.dtype, values.data(), n);
  for (float& value : values) value += offset;
  Buffer converted = Buffer::host(n * dtype_size(dtype));
  convert_from_f32(values.data(), converted.data(), dtype, n);
  storage = backend.allocate(n * dtype_size(dtype));
  backend.copy(converted.view(dtype, {n}), storage.view(dtype, {n}));
  return Tensor::view_of(storage.data(), dtype,
                         std::span<const int64_t>(weight.shape.data(), weight.ndim),
                         backend.device());
}

void permute_rows(Backend& backend, const Tensor& weight, const std::vector<int64_t>& order) {
  const int64_t n_rows = weight.size(0);
  HADRON_CHECK(static_cast<int64_t>(order.size()) == n_rows, "{} rows reordered by {} indices",
               n_rows, order.size());
  const size_t row_bytes = weight.nbytes() / n_rows;
  const int64_t n_bytes = static_cast<int64_t>(weight.nbytes());
  const Tensor bytes = Tensor::view_of(weight.data, DType::U8, {n_bytes}, weight.device);
  Buffer before = Buffer::host(weight.nbytes()), after = Buffer::host(weight.nbytes());
  backend.copy(bytes, before.view(DType::U8, {n_bytes}));
  for (int64_t i = 0; i < n_rows; ++i) {
    HADRON_CHECK(order[i] >= 0 && order[i] < n_rows, "row {} of {}", order[i], n_rows);
    std::memcpy(static_cast<char*>(after.data()) + i * row_bytes,
                static_cast<const char*>(before.data()) + order[i] * row_bytes, row_bytes);
  }
  backend.copy(after.view(DType::U8, {n_bytes}), bytes);
}

void append_rows(std::vector<int64_t>& order, int64_t begin, int64_t n) {
  for (int64_t i = 0; i < n; ++i) order.push_back(begin + i);
}

}  // namespace hadron
