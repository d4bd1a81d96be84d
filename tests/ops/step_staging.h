// StepStaging for the begin_step / end_step tests (step_io_test.cpp on the GPU,
// step_io_reference_test.cpp on the CPU): host memory from the backend, the counter zeroed,
// and the host's side of a turn (its image: header, then payload).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/buffer.h"
#include "ops/backend.h"

namespace hadron::test {

struct TestStaging {
  Buffer images[2], tokens[2], counter;
  StepStaging view;
};

inline TestStaging make_staging(Backend& backend, int64_t payload_bytes, int64_t n_tokens) {
  TestStaging s;
  const int64_t image_bytes = StepStaging::kHeaderBytes + payload_bytes;
  for (int turn = 0; turn < 2; ++turn) {
    s.images[turn] = backend.allocate_host(image_bytes);
    s.tokens[turn] = backend.allocate_host(n_tokens * sizeof(int32_t));
    s.view.images[turn] = s.images[turn].view(DType::U8, {image_bytes});
    s.view.tokens[turn] = s.tokens[turn].view(DType::I32, {n_tokens});
  }
  s.counter = backend.allocate(2 * sizeof(int32_t));
  s.view.counter = s.counter.view(DType::I32, {2});
  int32_t zero[2] = {0, 0};
  backend.copy(Tensor::view_of(zero, DType::I32, {2}), s.view.counter);
  return s;
}

// The image of turn `turn` as the runner writes it.
inline void write_image(const TestStaging& s, uint32_t turn, const std::vector<int32_t>& payload) {
  auto* image = static_cast<char*>(s.images[turn & 1].data());
  std::memset(image, 0, StepStaging::kHeaderBytes);
  std::memcpy(image, &turn, sizeof(turn));
  std::memcpy(image + StepStaging::kHeaderBytes, payload.data(), payload.size() * 4);
}

}  // namespace hadron::test
