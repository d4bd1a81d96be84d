// Backend's defaults for begin_step and end_step: the reference, on the host through copies.
// Placeholders past the sampled rows become token 0, as on every backend.
#include <cstring>
#include <vector>

#include "core/error.h"
#include "ops/backend.h"

namespace hadron {
namespace {

void check_staging(const StepStaging& s) {
  HADRON_CHECK(s.counter.dtype == DType::I32 && s.counter.numel() == 2 && s.counter.is_contiguous(),
               "step counter {}", s.counter.describe());
  for (int turn = 0; turn < 2; ++turn)
    HADRON_CHECK(s.images[turn].device == Device::CPU && s.images[turn].dtype == DType::U8 &&
                     s.tokens[turn].device == Device::CPU && s.tokens[turn].dtype == DType::I32 &&
                     s.tokens[turn].is_contiguous() && s.images[turn].is_contiguous(),
                 "step staging {}: image {}, tokens {}", turn, s.images[turn].describe(),
                 s.tokens[turn].describe());
}

int32_t read_turn(Backend& backend, const Tensor& counter) {
  int32_t values[2];
  backend.copy(counter, Tensor::view_of(values, DType::I32, {2}));
  return values[0];
}

}  // namespace

void check_begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                      const Tensor& sampled) {
  check_staging(staging);
  HADRON_CHECK(
      inputs.dtype == DType::U8 && inputs.is_contiguous() && n_ids >= 0 &&
          n_ids * 4 <= inputs.numel() && sampled.dtype == DType::I32 && sampled.is_contiguous(),
      "begin_step inputs {}, {} ids, sampled {}", inputs.describe(), n_ids, sampled.describe());
  for (const Tensor& image : staging.images)
    HADRON_CHECK(image.numel() >= StepStaging::kHeaderBytes + inputs.numel(),
                 "step image {} for {} input bytes", image.describe(), inputs.numel());
}

void check_end_step(const StepStaging& staging, const Tensor& sampled) {
  check_staging(staging);
  for (const Tensor& tokens : staging.tokens)
    HADRON_CHECK(
        sampled.dtype == DType::I32 && sampled.is_contiguous() && sampled.numel() <= tokens.numel(),
        "end_step {} into {}", sampled.describe(), tokens.describe());
}

void Backend::begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                         const Tensor& sampled) {
  check_begin_step(staging, inputs, n_ids, sampled);
  const int32_t turn = read_turn(*this, staging.counter);
  const Tensor& image = staging.images[turn & 1];
  uint32_t header = 0;
  std::memcpy(&header, image.data, sizeof(header));
  HADRON_CHECK(header == static_cast<uint32_t>(turn), "step turn {}, but its image is turn {}",
               turn, header);
  std::vector<uint8_t> payload(inputs.numel());
  std::memcpy(payload.data(), static_cast<const uint8_t*>(image.data) + StepStaging::kHeaderBytes,
              payload.size());
  std::vector<int32_t> host_sampled(sampled.numel());
  copy(sampled, Tensor::view_of(host_sampled.data(), DType::I32, {sampled.numel()}));
  for (int64_t t = 0; t < n_ids; ++t) {
    int32_t id = 0;
    std::memcpy(&id, payload.data() + t * 4, 4);
    if (id >= 0) continue;
    const int64_t row = -int64_t{id} - 1;
    id = row < sampled.numel() ? host_sampled[row] : 0;
    std::memcpy(payload.data() + t * 4, &id, 4);
  }
  copy(Tensor::view_of(payload.data(), DType::U8, {inputs.numel()}), inputs);
  const int32_t next[2] = {static_cast<int32_t>(static_cast<uint32_t>(turn) + 1), 0};
  copy(Tensor::view_of(const_cast<int32_t*>(next), DType::I32, {2}), staging.counter);
}

void Backend::end_step(const StepStaging& staging, const Tensor& sampled) {
  check_end_step(staging, sampled);
  const int32_t turn = read_turn(*this, staging.counter) - 1;
  copy(sampled, staging.tokens[turn & 1].slice_rows(0, sampled.numel()));
}

}  // namespace hadron
