// AsyncEngine: requests from many threads give the same greedy outputs as the synchronous
// engine; aborts free KV blocks; a full queue refuses; invalid requests are rejected.
#include "engine/async_engine.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"

namespace hadron {
namespace {

const std::string kModel = std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/qwen3-gqa4";

std::unique_ptr<LoadedModel> load() {
  EngineOptions options;
  options.model_path = kModel;
  options.max_model_len = 96;
  options.block_size = 8;
  options.max_num_seqs = 16;
  options.max_num_batched_tokens = 64;
  options.verbose = false;
  return LoadedModel::load(options, make_cpu_backend());
}

SamplingParams greedy(int64_t max_tokens) {
  SamplingParams p;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

std::vector<int32_t> drain(RequestStream& stream) {
  std::vector<int32_t> tokens;
  while (!stream.done())
    for (const RequestOutput& o : stream.wait_outputs(std::chrono::milliseconds(50)))
      tokens.insert(tokens.end(), o.token_ids.begin(), o.token_ids.end());
  return tokens;
}

TEST(AsyncEngine, ConcurrentSubmittersGetTheSynchronousOutputs) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<int32_t>> prompts(12);
  for (auto& p : prompts) {
    p.resize(3 + rng() % 40);
    for (int32_t& t : p) t = 3 + static_cast<int32_t>(rng() % 500);
  }
  std::vector<std::vector<int32_t>> expected;
  {
    auto model = load();
    for (const auto& p : prompts)
      expected.push_back(generate(*model, {{p, greedy(12)}})[0].completions[0]);
  }
  auto model = load();
  Engine engine(*model, nullptr);
  AsyncEngine async(engine, {});
  std::vector<std::vector<int32_t>> got(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i) {
    threads.emplace_back([&, i] {
      auto stream = async.submit(prompts[i], greedy(12));
      ASSERT_FALSE(stream->wait_accepted().has_value());
      got[i] = drain(*stream);
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "prompt " << i;
  EXPECT_EQ(async.n_unfinished(), 0u);
}

TEST(AsyncEngine, AbortFreesBlocksAndEndsTheStream) {
  auto model = load();
  const int64_t free_before = model->blocks().n_free();
  Engine engine(*model, nullptr);
  AsyncEngine async(engine, {});
  SamplingParams params = greedy(80);
  params.n = 3;
  auto stream = async.submit(std::vector<int32_t>(10, 7), params);
  ASSERT_FALSE(stream->wait_accepted().has_value());
  while (stream->wait_outputs(std::chrono::milliseconds(50)).empty()) {
  }
  async.abort(stream->request_id());
  drain(*stream);
  EXPECT_TRUE(stream->done());
  // The loop releases the request right after aborting it; give it a moment to get there.
  for (int i = 0; i < 100 && async.n_unfinished() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(async.n_unfinished(), 0u);
  // Every block of the three aborted completions is free again (cached ones count as free).
  EXPECT_EQ(model->blocks().n_free(), free_before);
}

TEST(AsyncEngine, RejectsInvalidAndRefusesWhenFull) {
  auto model = load();
  Engine engine(*model, nullptr);
  AsyncEngine async(engine, {.max_queued_requests = 2});
  auto too_long = async.submit(std::vector<int32_t>(200, 5), greedy(4));
  const std::optional<std::string> reason = too_long->wait_accepted();
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("context"), std::string::npos) << *reason;
  auto a = async.submit(std::vector<int32_t>(10, 5), greedy(60));
  auto b = async.submit(std::vector<int32_t>(10, 6), greedy(60));
  EXPECT_THROW(async.submit(std::vector<int32_t>(10, 7), greedy(4)), QueueFullError);
  drain(*a);
  drain(*b);
}

}  // namespace
}  // namespace hadron
