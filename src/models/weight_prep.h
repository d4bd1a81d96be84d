// Changes models make to loaded weights in prepare(): widening small vectors to F32 (with an
// offset for (1 + w) norms) and reordering the rows of a fused projection.
#pragma once

#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "core/tensor.h"
#include "ops/backend.h"

namespace hadron {

// weight + offset in `dtype`, in `storage` (allocated here on the backend); returns its view.
// Norms that scale by (1 + w) take offset 1, added in fp32 as transformers does.
Tensor offset_copy(Backend& backend, const Tensor& weight, float offset, DType dtype,
                   Buffer& storage);
inline Tensor widen_to_f32(Backend& backend, const Tensor& weight, float offset, Buffer& storage) {
  return offset_copy(backend, weight, offset, DType::F32, storage);
}

// Reorders the rows of weight ([N, ...]) in place: row i becomes old row order[i].
void permute_rows(Backend& backend, const Tensor& weight, const std::vector<int64_t>& order);

// Appends rows [begin, begin + n) to order.
void append_rows(std::vector<int64_t>& order, int64_t begin, int64_t n);

}  // namespace hadron
