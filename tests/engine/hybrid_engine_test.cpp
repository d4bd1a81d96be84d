// Engine properties of a hybrid model (gated DeltaNet + attention, the qwen3-next fixture),
// whose sequences also hold a linear-attention state slot: outputs do not depend on batch
// mates, preemption (state dropped, recomputed from position 0), chunked prefill, async
// scheduling or n > 1 siblings; no state slot or KV block leaks under random add/step/abort.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "engine_test_util.h"

namespace hadron {
namespace {

std::unique_ptr<LoadedModel> load_hybrid(int64_t num_kv_blocks = 0, int64_t batched_tokens = 64,
                                         int64_t max_num_seqs = 8) {
  return LoadedModel::load(
      test_engine_options("qwen3-next", max_num_seqs, num_kv_blocks, batched_tokens),
      make_cpu_backend());
}

GenerationRequest request(std::mt19937& rng, int min_len, int max_len, int64_t max_tokens) {
  GenerationRequest r;
  r.prompt.resize(min_len + rng() % (max_len - min_len + 1));
  for (int32_t& t : r.prompt) t = 3 + static_cast<int32_t>(rng() % 500);
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  return r;
}

void expect_nothing_held(LoadedModel& model) {
  EXPECT_EQ(model.blocks().n_free(), model.blocks().n_blocks());
  EXPECT_EQ(model.state_slots().n_free(), model.state_slots().n_slots());
}

TEST(HybridEngine, StateSlotsAndSnapshotsSized) {
  auto model = load_hybrid();
  EXPECT_TRUE(model->state_slots().enabled());
  EXPECT_EQ(model->state_slots().n_slots(), 8);
  ASSERT_EQ(model->model().state_layers().size(), 3u);  // 3 DeltaNet layers, 1 attention
  EXPECT_EQ(model->model().kv_layers().size(), 1u);
  // conv state 160 x 3 and recurrent state 4 x 16 x 24, fp32, per layer and sequence
  const size_t per_seq = 3 * (160 * 3 + 4 * 16 * 24) * 4;
  // Prefix snapshots: a tenth of the CPU's 64 MB budget, rows after the 8 slots.
  EXPECT_EQ(model->snapshots().n_snapshots(), static_cast<int64_t>(0.1 * 64e6 / per_seq));
  EXPECT_EQ(model->kv().state_bytes(), (8 + model->snapshots().n_snapshots()) * per_seq);
}

TEST(HybridEngine, OutputDoesNotDependOnBatchMatesChunksOrPreemption) {
  std::mt19937 rng(21);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 6; ++i) batch.push_back(request(rng, 5, 40, 20));
  std::vector<std::vector<int32_t>> alone;
  auto roomy = load_hybrid();
  for (const GenerationRequest& r : batch) alone.push_back(generate(*roomy, {r})[0].completions[0]);
  const auto together = generate(*roomy, batch);
  // 13 blocks of 8 tokens (one sequence may need 8) and 16-token steps: chunked prefills and
  // preemptions.
  auto tight = load_hybrid(13, 16);
  GenerationStats stats;
  const auto squeezed = generate(*tight, batch, nullptr, &stats);
  EXPECT_GT(stats.engine.n_preemptions, 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(together[i].completions[0], alone[i]) << "request " << i;
    EXPECT_EQ(squeezed[i].completions[0], alone[i]) << "request " << i;
  }
  expect_nothing_held(*roomy);
  expect_nothing_held(*tight);
  // Async scheduling (step N+1 queued before N's tokens are read) changes nothing either.
  EngineOptions options = test_engine_options("qwen3-next", 8, 13, 16);
  options.async_scheduling = true;
  auto async = LoadedModel::load(options, make_cpu_backend());
  const auto overlapped = generate(*async, batch);
  for (size_t i = 0; i < batch.size(); ++i)
    EXPECT_EQ(overlapped[i].completions[0], alone[i]) << "request " << i;
  expect_nothing_held(*async);
}

// On the CPU the state slots take at most half the KV budget: here 4 slots for 8 sequences,
// so admission also waits for a free slot.
TEST(HybridEngine, FewerSlotsThanSequencesStillServesAll) {
  EngineOptions options = test_engine_options("qwen3-next", 8, 0, 64);
  const size_t per_seq = 3 * (160 * 3 + 4 * 16 * 24) * 4;
  options.kv_cache_memory_bytes = 8 * per_seq + per_seq / 2;
  auto model = LoadedModel::load(options, make_cpu_backend());
  ASSERT_EQ(model->state_slots().n_slots(), 4);
  std::mt19937 rng(24);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 7; ++i) batch.push_back(request(rng, 5, 30, 10));
  const auto results = generate(*model, batch);
  auto roomy = load_hybrid();
  for (size_t i = 0; i < batch.size(); ++i)
    EXPECT_EQ(results[i].completions[0], generate(*roomy, {batch[i]})[0].completions[0]) << i;
  expect_nothing_held(*model);
}

int64_t computed_tokens(const GenerationStats& stats) {
  const EngineStats& e = stats.engine;
  return e.decode_steps.n_tokens + e.mixed_steps.n_tokens + e.prefill_steps.n_tokens;
}

// Siblings fork from the first completion at the prompt's last full block (24 of 30 tokens):
// they share its blocks, start from a copy of its state and compute only the rest.
TEST(HybridEngine, SiblingsForkWithACopyOfTheStateAndMatchASingleCompletion) {
  std::mt19937 rng(22);
  GenerationRequest r = request(rng, 30, 30, 8);
  for (const int64_t batched_tokens : {64, 7}) {  // the prompt in one step, or in chunks
    SCOPED_TRACE(batched_tokens);
    auto model = load_hybrid(0, batched_tokens);
    r.params.n = 1;
    const auto single = generate(*model, {r})[0].completions[0];
    r.params.n = 3;
    GenerationStats stats;
    const auto result = generate(*model, {r}, nullptr, &stats)[0];
    ASSERT_EQ(result.completions.size(), 3u);
    for (const auto& completion : result.completions) EXPECT_EQ(completion, single);
    // The first run left a state snapshot at 24, so the first completion reuses 24 tokens and
    // computes 6, each sibling 6 more, and 7 decode steps per completion.
    EXPECT_EQ(computed_tokens(stats), 6 + 2 * 6 + 3 * 7);
    expect_nothing_held(*model);
  }
}

TEST(HybridEngine, RandomAddStepAbortNeverLeaksStateSlots) {
  auto model = load_hybrid(30, 24, 4);
  Engine engine(*model, nullptr);
  run_random_traffic(engine, *model, 23, 150, 2, 20);
  expect_nothing_held(*model);
}

}  // namespace
}  // namespace hadron
