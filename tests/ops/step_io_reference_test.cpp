// Backend's default begin_step / end_step (the reference every backend is tested against),
// on the CPU backend: turns alternate between the two images and token buffers, placeholders
// resolve from the previous step's tokens, and an image of another turn is refused.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "ops/backend.h"
#include "step_staging.h"

namespace hadron::test {
namespace {

TEST(StepIoReference, TurnsAlternateAndPlaceholdersResolve) {
  auto cpu = make_cpu_backend();
  TestStaging s = make_staging(*cpu, 6 * 4, 3);
  std::vector<int32_t> inputs(6), sampled = {100, 101, 102};
  for (uint32_t turn = 0; turn < 4; ++turn) {
    // Three ids: row 1's placeholder, a real id, a placeholder past the sampled rows; then
    // three words that are not ids (negative values stay).
    const int32_t real = 7 + static_cast<int32_t>(turn);
    write_image(s, turn, {-2, real, -9, -1, -5, 42});
    cpu->begin_step(s.view, Tensor::view_of(inputs.data(), DType::U8, {24}), 3,
                    Tensor::view_of(sampled.data(), DType::I32, {3}));
    EXPECT_EQ(inputs, (std::vector<int32_t>{sampled[1], real, 0, -1, -5, 42})) << "turn " << turn;
    EXPECT_EQ(s.view.counter.ptr<int32_t>()[0], static_cast<int32_t>(turn) + 1);
    sampled = {static_cast<int32_t>(200 + turn), 201, 202};
    cpu->end_step(s.view, Tensor::view_of(sampled.data(), DType::I32, {3}));
    EXPECT_EQ(s.view.tokens[turn & 1].ptr<int32_t>()[0], static_cast<int32_t>(200 + turn));
  }
}

TEST(StepIoReference, AnImageOfAnotherTurnIsRefused) {
  auto cpu = make_cpu_backend();
  TestStaging s = make_staging(*cpu, 8, 1);
  std::vector<int32_t> inputs(2), sampled = {5};
  write_image(s, 2, {1, 2});  // image 0 says turn 2 where turn 0 is due
  EXPECT_THROW(cpu->begin_step(s.view, Tensor::view_of(inputs.data(), DType::U8, {8}), 1,
                               Tensor::view_of(sampled.data(), DType::I32, {1})),
               Error);
}

}  // namespace
}  // namespace hadron::test
