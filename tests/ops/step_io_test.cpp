// CUDA vs CPU: begin_step and end_step over several turns (the image of the counter's turn
// into the inputs with its token-id placeholders resolved, the sampled tokens into the turn's
// host buffer, the counter advanced once a step).
#include "op_test_util.h"
#include "step_staging.h"

namespace hadron::test {
namespace {

class StepIoTest : public OpTest {};

TEST_F(StepIoTest, BeginAndEndStepMatchTheReferenceTurnAfterTurn) {
  // (payload words, token ids at their start, sampled rows): one unit, odd ids, a payload
  // spanning several blocks of the kernel, more ids than sampled rows.
  for (const auto& [n_words, n_ids, n_sampled] :
       {std::tuple{2, 1, 1}, {10, 7, 3}, {4098, 256, 256}, {20000, 1000, 37}}) {
    SCOPED_TRACE(testing::Message()
                 << "words " << n_words << " ids " << n_ids << " sampled " << n_sampled);
    const int64_t n_bytes = int64_t{n_words} * 4;
    TestStaging gpu = make_staging(*gpu_, n_bytes, n_sampled);
    TestStaging cpu = make_staging(*cpu_, n_bytes, n_sampled);
    Buffer inputs = gpu_->allocate(n_bytes);
    std::vector<int32_t> expected(n_words);
    for (uint32_t turn = 0; turn < 5; ++turn) {
      SCOPED_TRACE(testing::Message() << "turn " << turn);
      std::vector<int32_t> payload = random_ints(n_words, -n_sampled - 3, 151935);
      for (int64_t i = 0; i < n_ids; i += 3) payload[i] = -static_cast<int32_t>(i % n_sampled) - 1;
      write_image(gpu, turn, payload);
      write_image(cpu, turn, payload);
      std::vector<int32_t> sampled = random_ints(n_sampled, 0, 151935);
      DeviceTensor sampled_gpu = upload_i32(sampled, {n_sampled});
      gpu_->begin_step(gpu.view, inputs.view(DType::U8, {n_bytes}), n_ids, sampled_gpu.tensor);
      cpu_->begin_step(cpu.view, Tensor::view_of(expected.data(), DType::U8, {n_bytes}), n_ids,
                       host_view_i32(sampled, {n_sampled}));
      EXPECT_EQ(download_i32(inputs.view(DType::I32, {n_words})), expected);
      for (int64_t i = 0; i < n_words; ++i) {
        const int32_t id = payload[i];
        const int32_t want =
            i >= n_ids || id >= 0 ? id : (-id - 1 < n_sampled ? sampled[-id - 1] : 0);
        ASSERT_EQ(expected[i], want) << "reference, word " << i;
      }
      // The step's tokens go to its turn's buffer; the other turn's stays as it was.
      std::vector<int32_t> tokens = random_ints(n_sampled, 0, 151935);
      DeviceTensor tokens_gpu = upload_i32(tokens, {n_sampled});
      auto* other = static_cast<int32_t*>(gpu.tokens[(turn + 1) & 1].data());
      std::fill_n(other, n_sampled, -7);
      gpu_->end_step(gpu.view, tokens_gpu.tensor);
      gpu_->record_event()->wait();
      const auto* got = static_cast<const int32_t*>(gpu.tokens[turn & 1].data());
      EXPECT_EQ(std::vector<int32_t>(got, got + n_sampled), tokens);
      EXPECT_EQ(std::vector<int32_t>(other, other + n_sampled),
                std::vector<int32_t>(n_sampled, -7));
      EXPECT_EQ(download_i32(gpu.view.counter), (std::vector<int32_t>{int32_t(turn) + 1, 0}));
    }
  }
}

TEST_F(StepIoTest, AsyncCopyIsCompleteAfterItsEvent) {
  const int64_t n = 1 << 20;
  std::vector<int32_t> values = random_ints(n, 0, 1 << 30);
  DeviceTensor device = upload_i32(values, {n});
  Buffer pinned = gpu_->allocate_host(n * sizeof(int32_t));
  std::fill_n(static_cast<int32_t*>(pinned.data()), n, -1);
  gpu_->copy_async(device.tensor, pinned.view(DType::I32, {n}));
  gpu_->record_event()->wait();
  const auto* got = static_cast<const int32_t*>(pinned.data());
  EXPECT_EQ(std::vector<int32_t>(got, got + n), values);
}

}  // namespace
}  // namespace hadron::test
