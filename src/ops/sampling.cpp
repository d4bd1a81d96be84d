// The host reference of token sampling (sorts where the GPU selects by radix, sums in double)
// and Backend::sample's default, which runs it row by row.
#include "ops/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "ops/backend.h"

namespace hadron {
namespace {

uint32_t key_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return ordered_key(bits);
}

int32_t first_argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// The largest key t whose mass of {key >= t}, over candidates, reaches target.
uint32_t mass_threshold(const std::vector<uint32_t>& keys, const std::vector<double>& mass,
                        double target) {
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] > keys[b]; });
  double acc = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    acc += mass[order[i]];
    const bool group_end = i + 1 == order.size() || keys[order[i + 1]] != keys[order[i]];
    if (group_end && acc >= target) return keys[order[i]];
  }
  return keys[order.back()];
}

}  // namespace

int32_t sample_row_reference(std::span<const float> logits, const SampleRowParams& params,
                             float u) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  if (params.temperature <= 0 || params.top_k == 1) return first_argmax(logits);
  const float max_logit = logits[first_argmax(logits)];
  const float inv_temperature = 1.0f / params.temperature;
  std::vector<uint32_t> keys(vocab);
  std::vector<double> probs(vocab);
  for (int64_t i = 0; i < vocab; ++i) {
    keys[i] = key_of(logits[i]);
    probs[i] = std::exp((logits[i] - max_logit) * inv_temperature);
  }
  uint32_t threshold = 0;
  if (params.top_k > 0 && params.top_k < vocab) {
    std::vector<uint32_t> sorted = keys;
    std::nth_element(sorted.begin(), sorted.begin() + (params.top_k - 1), sorted.end(),
                     std::greater<>());
    threshold = sorted[params.top_k - 1];
  }
  if (params.top_p < 1) {
    std::vector<double> kept(vocab);
    double total = 0;
    for (int64_t i = 0; i < vocab; ++i) total += kept[i] = keys[i] >= threshold ? probs[i] : 0;
    threshold = std::max(threshold, mass_threshold(keys, kept, params.top_p * total));
  }
  auto is_kept = [&](int64_t i) { return keys[i] >= threshold && probs[i] >= params.min_p; };
  double total = 0;
  int64_t last = 0;
  for (int64_t i = 0; i < vocab; ++i)
    if (is_kept(i)) {
      total += probs[i];
      last = i;
    }
  const double target = double{u} * total;
  double acc = 0;
  for (int64_t i = 0; i < vocab; ++i)
    if (is_kept(i) && (acc += probs[i]) > target) return static_cast<int32_t>(i);
  return static_cast<int32_t>(last);
}

void Backend::sample_on_host(Backend& backend, const Tensor& logits, const SamplingBatch& batch,
                             const Tensor& tokens) {
  const int64_t n_rows = logits.size(0), vocab = logits.size(1);
  HADRON_CHECK(logits.dtype == DType::F32 && logits.ndim == 2 && tokens.dtype == DType::I32 &&
                   tokens.numel() == n_rows && batch.temperature.numel() == n_rows &&
                   batch.top_k.numel() == n_rows && batch.top_p.numel() == n_rows &&
                   batch.min_p.numel() == n_rows && batch.seeds.numel() == n_rows &&
                   batch.offsets.numel() == n_rows,
               "sample {} into {}", logits.describe(), tokens.describe());
  // Host copies of the inputs when they live on the device.
  const bool on_host = logits.device == Device::CPU;
  std::vector<Buffer> staged;
  auto host_view = [&](const Tensor& t) {
    if (on_host) return t;
    staged.push_back(Buffer::host(t.nbytes()));
    Tensor copy = t;
    copy.data = staged.back().data();
    copy.device = Device::CPU;
    backend.copy(t, copy);
    return copy;
  };
  const Tensor host_logits = host_view(logits), temperature = host_view(batch.temperature),
               top_k = host_view(batch.top_k), top_p = host_view(batch.top_p),
               min_p = host_view(batch.min_p), seeds = host_view(batch.seeds),
               offsets = host_view(batch.offsets);
  std::vector<int32_t> result(n_rows);
  for (int64_t r = 0; r < n_rows; ++r) {
    const SampleRowParams params{temperature.ptr<float>()[r], top_k.ptr<int32_t>()[r],
                                 top_p.ptr<float>()[r], min_p.ptr<float>()[r]};
    const float u = sample_uniform(static_cast<uint64_t>(seeds.ptr<int64_t>()[r]),
                                   static_cast<uint64_t>(offsets.ptr<int64_t>()[r]));
    result[r] = sample_row_reference(
        std::span<const float>(host_logits.ptr<float>() + r * vocab, vocab), params, u);
  }
  Tensor host_tokens = Tensor::view_of(result.data(), DType::I32, {n_rows});
  if (on_host) {
    std::memcpy(tokens.data, result.data(), result.size() * sizeof(int32_t));
  } else {
    backend.copy(host_tokens, tokens);
  }
}

}  // namespace hadron
