#include "backends/cpu/cpu_backend.h"

#include <cstring>

#include "core/error.h"

namespace hadron {

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

DType CpuBackend::weight_dtype(DType checkpoint_dtype) const {
  // F32/F16/BF16 stay as stored and are converted inside the ops; fp8 is widened at load.
  const bool is_fp8 = checkpoint_dtype == DType::F8_E4M3 || checkpoint_dtype == DType::F8_E5M2;
  return is_fp8 ? DType::F32 : checkpoint_dtype;
}

void CpuBackend::copy(const Tensor& src, const Tensor& dst) {
  HADRON_CHECK(src.dtype == dst.dtype && src.numel() == dst.numel(), "copy {} -> {}",
               src.describe(), dst.describe());
  HADRON_CHECK(src.is_contiguous() && dst.is_contiguous(), "copy of non-contiguous tensors");
  std::memcpy(dst.data, src.data, src.nbytes());
}

float load_f32(const Tensor& t, int64_t i) {
  float value;
  load_row_f32(t, i, 1, &value);
  return value;
}

void load_row_f32(const Tensor& t, int64_t offset, int64_t n, float* dst) {
  const char* base = static_cast<const char*>(t.data) + offset * dtype_size(t.dtype);
  convert_to_f32(base, t.dtype, dst, static_cast<size_t>(n));
}

void CpuBackend::gather_rows(const Tensor& x, const Tensor& rows, const Tensor& out) {
  const int64_t width = x.size(-1);
  HADRON_CHECK(x.dtype == out.dtype && out.size(0) == rows.size(0) && out.size(-1) == width,
               "gather_rows {} by {} into {}", x.describe(), rows.describe(), out.describe());
  const size_t row_bytes = width * dtype_size(x.dtype);
  for (int64_t r = 0; r < rows.size(0); ++r) {
    const int32_t row = rows.ptr<int32_t>()[r];
    HADRON_CHECK(row >= 0 && row < x.size(0), "row {} of {}", row, x.describe());
    std::memcpy(static_cast<char*>(out.data) + r * row_bytes,
                static_cast<const char*>(x.data) + row * row_bytes, row_bytes);
  }
}

void CpuBackend::embedding(const Tensor& ids, const Tensor& table, const Tensor& out) {
  const int64_t hidden = table.size(1);
  HADRON_CHECK(out.dtype == DType::F32 && out.size(0) == ids.size(0) && out.size(1) == hidden,
               "embedding {} from {} into {}", ids.describe(), table.describe(), out.describe());
  for (int64_t t = 0; t < ids.size(0); ++t) {
    const int32_t id = ids.ptr<int32_t>()[t];
    HADRON_CHECK(id >= 0 && id < table.size(0), "token id {} outside vocab {}", id, table.size(0));
    load_row_f32(table, id * hidden, hidden, out.ptr<float>() + t * hidden);
  }
}

}  // namespace hadron
