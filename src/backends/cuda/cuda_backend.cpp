// CudaBackend: memory, copies and the stream; each op validates its tensors here (host code,
// where errors are formatted) and calls its kernel's launcher (kernels.h).
#include "backends/cuda/cuda_backend.h"

#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/kernels.h"

namespace hadron {
namespace cuda {

void check_tensor(const Tensor& t, DType dtype, const char* name) {
  HADRON_CHECK(t.defined() && on_gpu(t) && t.dtype == dtype,
               "{} must be a contiguous {} tensor on the GPU, got {}", name, dtype_name(dtype),
               t.defined() ? t.describe() : std::string("undefined"));
}

void CudaBackend::embedding(const Tensor& ids, const Tensor& table, const Tensor& out) {
  check_tensor(ids, DType::I32, "embedding ids");
  check_tensor(table, DType::BF16, "embedding table");
  check_tensor(out, DType::BF16, "embedding out");
  const int64_t hidden = table.size(1);
  HADRON_CHECK(
      table.ndim == 2 && hidden % 8 == 0 && out.size(0) == ids.numel() && out.size(-1) == hidden,
      "embedding {} from {} into {}", ids.describe(), table.describe(), out.describe());
  launch_embedding(ids.ptr<int32_t>(), table.data, out.data, ids.numel(), hidden, table.size(0),
                   stream_);
}

void check_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& residual_out,
                    const Tensor& weight, const Tensor& out) {
  check_tensor(x, DType::BF16, "rms_norm x");
  check_tensor(weight, DType::BF16, "rms_norm weight");
  check_tensor(out, DType::BF16, "rms_norm out");
  const int64_t width = weight.numel();
  HADRON_CHECK(x.numel() == out.numel() && width > 0 && x.numel() % width == 0 && width % 8 == 0 &&
                   width <= 16384,
               "rms_norm {} with weight {} into {} (width a multiple of 8, at most 16384)",
               x.describe(), weight.describe(), out.describe());
  if (!residual.defined()) return;
  check_tensor(residual, DType::BF16, "rms_norm residual");
  check_tensor(residual_out, DType::BF16, "rms_norm residual_out");
  HADRON_CHECK(residual.numel() == x.numel() && residual_out.numel() == x.numel(),
               "rms_norm residual {} -> {} for {}", residual.describe(), residual_out.describe(),
               x.describe());
}

void CudaBackend::rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
  check_rms_norm(x, Tensor{}, Tensor{}, weight, out);
  const int64_t width = weight.numel();
  launch_rms_norm(x.data, nullptr, nullptr, weight.data, out.data, x.numel() / width, width, eps,
                  stream_);
}

void CudaBackend::add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                               float eps, const Tensor& out) {
  check_rms_norm(x, residual, residual, weight, out);
  const int64_t width = weight.numel();
  launch_rms_norm(x.data, residual.data, residual.data, weight.data, out.data, x.numel() / width,
                  width, eps, stream_);
}

void CudaBackend::rope(const Tensor& x, const Tensor& positions, const Tensor& cos_sin,
                       RopeStyle style) {
  check_tensor(x, DType::BF16, "rope x");
  check_tensor(positions, DType::I32, "rope positions");
  check_tensor(cos_sin, DType::F32, "rope cos_sin");
  const int64_t rotary_dim = cos_sin.size(1);
  HADRON_CHECK(x.ndim == 3 && positions.numel() == x.size(0) && rotary_dim <= x.size(2) &&
                   rotary_dim % 2 == 0 && cos_sin.ndim == 2,
               "rope on {} with positions {} and table {}", x.describe(), positions.describe(),
               cos_sin.describe());
  launch_rope(x.data, positions.ptr<int32_t>(), cos_sin.ptr<float>(), x.size(0), x.size(1),
              x.size(2), rotary_dim, style == RopeStyle::kNeox, stream_);
}

void CudaBackend::store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache,
                           const Tensor& v_cache, const Tensor& slot_mapping) {
  for (const auto& [t, name] :
       {std::pair{&k, "k"}, {&v, "v"}, {&k_cache, "k_cache"}, {&v_cache, "v_cache"}})
    check_tensor(*t, DType::BF16, name);
  check_tensor(slot_mapping, DType::I32, "slot_mapping");
  const int64_t token_elems = k.size(1) * k.size(2);
  HADRON_CHECK(k.ndim == 3 && k_cache.ndim == 4 && v.numel() == k.numel() &&
                   v_cache.numel() == k_cache.numel() &&
                   token_elems == k_cache.size(2) * k_cache.size(3) && token_elems % 8 == 0 &&
                   slot_mapping.numel() == k.size(0),
               "store_kv {} into {}", k.describe(), k_cache.describe());
  launch_store_kv(k.data, v.data, k_cache.data, v_cache.data, slot_mapping.ptr<int32_t>(),
                  k.size(0), token_elems, stream_);
}

void check_silu_mul(const Tensor& gate_up, const Tensor& out) {
  check_tensor(gate_up, DType::BF16, "silu_mul gate_up");
  check_tensor(out, DType::BF16, "silu_mul out");
  const int64_t inter = out.size(-1);
  HADRON_CHECK(
      gate_up.size(-1) == 2 * inter && gate_up.numel() == 2 * out.numel() && inter % 8 == 0,
      "silu_mul {} into {}", gate_up.describe(), out.describe());
}

void CudaBackend::silu_mul(const Tensor& gate_up, const Tensor& out) {
  check_silu_mul(gate_up, out);
  const int64_t inter = out.size(-1);
  launch_silu_mul(gate_up.data, out.data, out.numel() / inter, inter, stream_);
}

void CudaBackend::gather_rows(const Tensor& x, const Tensor& rows, const Tensor& out) {
  check_tensor(rows, DType::I32, "gather_rows rows");
  HADRON_CHECK(on_gpu(x) && on_gpu(out) && x.dtype == out.dtype, "gather_rows {} into {}",
               x.describe(), out.describe());
  const int64_t width = x.size(-1), row_bytes = width * dtype_size(x.dtype);
  HADRON_CHECK(out.size(0) == rows.numel() && out.size(-1) == width && row_bytes % 16 == 0,
               "gather_rows {} by {} into {}", x.describe(), rows.describe(), out.describe());
  launch_gather_rows(x.data, rows.ptr<int32_t>(), out.data, rows.numel(), row_bytes, stream_);
}

void CudaBackend::sample(const Tensor& logits, const SamplingBatch& batch, const Tensor& tokens) {
  check_tensor(logits, DType::F32, "sample logits");
  check_tensor(tokens, DType::I32, "sample tokens");
  check_tensor(batch.temperature, DType::F32, "temperature");
  check_tensor(batch.top_k, DType::I32, "top_k");
  check_tensor(batch.top_p, DType::F32, "top_p");
  check_tensor(batch.min_p, DType::F32, "min_p");
  check_tensor(batch.seeds, DType::I64, "seeds");
  check_tensor(batch.offsets, DType::I64, "offsets");
  const int64_t n_rows = logits.size(0);
  HADRON_CHECK(logits.ndim == 2 && tokens.numel() == n_rows &&
                   batch.temperature.numel() == n_rows && batch.top_k.numel() == n_rows &&
                   batch.top_p.numel() == n_rows && batch.min_p.numel() == n_rows &&
                   batch.seeds.numel() == n_rows && batch.offsets.numel() == n_rows &&
                   logits.size(1) < (int64_t{1} << 31),
               "sample {} into {}", logits.describe(), tokens.describe());
  launch_sample({logits.ptr<float>(), batch.temperature.ptr<float>(), batch.top_k.ptr<int32_t>(),
                 batch.top_p.ptr<float>(), batch.min_p.ptr<float>(), batch.seeds.ptr<uint64_t>(),
                 batch.offsets.ptr<uint64_t>(), tokens.ptr<int32_t>(), n_rows, logits.size(1)},
                stream_);
}

}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(int device_idx) {
  return std::make_unique<cuda::CudaBackend>(device_idx);
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

}  // namespace hadron
