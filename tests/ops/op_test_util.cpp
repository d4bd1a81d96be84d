#include "op_test_util.h"

#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "core/dtype.h"

namespace hadron::test {

void OpTest::SetUp() {
  ASSERT_GT(cuda_device_count(), 0) << "these tests are labelled gpu and need a CUDA device";
  cpu_ = make_cpu_backend();
  gpu_ = make_cuda_backend(0);
  seed_ = std::random_device{}();
  rng_.seed(seed_);
  RecordProperty("seed", std::to_string(seed_));
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed_));
}

std::vector<float> OpTest::random_floats(int64_t n, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng_);
  return values;
}

std::vector<int32_t> OpTest::random_ints(int64_t n, int32_t lo, int32_t hi) {
  std::uniform_int_distribution<int32_t> uniform(lo, hi);
  std::vector<int32_t> values(n);
  for (int32_t& v : values) v = uniform(rng_);
  return values;
}

void OpTest::round_bf16(std::vector<float>& values) {
  for (float& v : values) v = bf16_to_f32(f32_to_bf16(v));
}

Tensor OpTest::host_view(std::vector<float>& values, std::vector<int64_t> shape) {
  return Tensor::view_of(values.data(), DType::F32, shape);
}

Tensor OpTest::host_view_i32(std::vector<int32_t>& values, std::vector<int64_t> shape) {
  return Tensor::view_of(values.data(), DType::I32, shape);
}

DeviceTensor OpTest::upload(std::vector<float>& values, std::vector<int64_t> shape, DType dtype) {
  DeviceTensor result;
  result.buffer = gpu_->allocate(values.size() * dtype_size(dtype));
  result.tensor = Tensor::view_of(result.buffer.data(), dtype, shape, Device::CUDA);
  EXPECT_EQ(result.tensor.numel(), static_cast<int64_t>(values.size()));
  if (dtype == DType::BF16) round_bf16(values);
  std::vector<uint16_t> bf16(values.size());
  Tensor host;
  if (dtype == DType::BF16) {
    convert_from_f32(values.data(), bf16.data(), DType::BF16, values.size());
    host = Tensor::view_of(bf16.data(), DType::BF16, shape);
  } else {
    host = Tensor::view_of(values.data(), DType::F32, shape);
  }
  gpu_->copy(host, result.tensor);
  return result;
}

DeviceTensor OpTest::upload_i32(const std::vector<int32_t>& values, std::vector<int64_t> shape) {
  DeviceTensor result;
  result.buffer = gpu_->allocate(values.size() * 4);
  result.tensor = Tensor::view_of(result.buffer.data(), DType::I32, shape, Device::CUDA);
  gpu_->copy(Tensor::view_of(const_cast<int32_t*>(values.data()), DType::I32, shape),
             result.tensor);
  return result;
}

DeviceTensor OpTest::upload_i64(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  DeviceTensor result;
  result.buffer = gpu_->allocate(values.size() * 8);
  result.tensor = Tensor::view_of(result.buffer.data(), DType::I64, shape, Device::CUDA);
  gpu_->copy(Tensor::view_of(const_cast<int64_t*>(values.data()), DType::I64, shape),
             result.tensor);
  return result;
}

DeviceTensor OpTest::poisoned(std::vector<int64_t> shape, DType dtype) {
  DeviceTensor result;
  const Tensor probe = Tensor::view_of(nullptr, dtype, shape);
  result.buffer = gpu_->allocate(probe.nbytes());
  result.tensor = Tensor::view_of(result.buffer.data(), dtype, shape, Device::CUDA);
  std::vector<uint8_t> nan_bytes(probe.nbytes(), 0xff);
  gpu_->copy(Tensor::view_of(nan_bytes.data(), dtype, shape), result.tensor);
  return result;
}

std::vector<float> OpTest::download(const Tensor& t) {
  std::vector<uint8_t> bytes(t.nbytes());
  Tensor host = t;
  host.data = bytes.data();
  host.device = Device::CPU;
  gpu_->copy(t, host);
  std::vector<float> values(t.numel());
  convert_to_f32(bytes.data(), t.dtype, values.data(), values.size());
  return values;
}

std::vector<int32_t> OpTest::download_i32(const Tensor& t) {
  std::vector<int32_t> values(t.numel());
  Tensor host = t;
  host.data = values.data();
  host.device = Device::CPU;
  gpu_->copy(t, host);
  return values;
}

std::vector<float> slot_rows(const std::vector<float>& cache, const std::vector<int32_t>& slots,
                             int64_t token_elems) {
  std::vector<float> rows;
  for (const int32_t slot : slots)
    rows.insert(rows.end(), cache.begin() + slot * token_elems,
                cache.begin() + (slot + 1) * token_elems);
  return rows;
}

double relative_error(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(actual[i]) || std::isnan(expected[i])) return INFINITY;
    diff += (double{actual[i]} - expected[i]) * (double{actual[i]} - expected[i]);
    norm += double{expected[i]} * expected[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

std::vector<Seq> decode_batch(std::mt19937_64& rng, int n, int max_kv) {
  std::uniform_int_distribution<int> len(1, max_kv);
  std::vector<Seq> seqs(n);
  for (Seq& s : seqs) s = {1, len(rng)};
  return seqs;
}

}  // namespace hadron::test
