// Backend's default for resolve_token_ids: the reference, on the host through copies.
// Placeholders past the sampled rows become token 0, as on every backend.
#include <vector>

#include "core/error.h"
#include "ops/backend.h"

namespace hadron {

void Backend::resolve_token_ids(const Tensor& ids, const Tensor& sampled) {
  HADRON_CHECK(ids.dtype == DType::I32 && sampled.dtype == DType::I32 && ids.is_contiguous() &&
                   sampled.is_contiguous(),
               "resolve_token_ids {} from {}", ids.describe(), sampled.describe());
  std::vector<int32_t> host_ids(ids.numel()), host_sampled(sampled.numel());
  copy(ids, Tensor::view_of(host_ids.data(), DType::I32, {ids.numel()}));
  copy(sampled, Tensor::view_of(host_sampled.data(), DType::I32, {sampled.numel()}));
  for (int32_t& id : host_ids) {
    if (id >= 0) continue;
    const int64_t row = -int64_t{id} - 1;
    id = row < sampled.numel() ? host_sampled[row] : 0;
  }
  copy(Tensor::view_of(host_ids.data(), DType::I32, {ids.numel()}), ids);
}

}  // namespace hadron
