// Prefix caching of hybrid models (gated DeltaNet + attention) through linear-attention state
// snapshots (ADR 0011): a prefix hit gives exactly the greedy output of a miss, for shared
// prefixes shorter than a block, of whole blocks and of blocks plus a part; no KV block, state
// slot or snapshot reference leaks under random add / abort / step with preemption; the memory
// report names the snapshot budget.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "engine_test_util.h"

namespace hadron {
namespace {

std::unique_ptr<LoadedModel> load(const std::string& fixture, bool prefix_caching,
                                  int64_t num_kv_blocks = 0, int64_t batched_tokens = 64,
                                  int64_t num_snapshots = 0, bool async = false) {
  EngineOptions options = test_engine_options(fixture, 4, num_kv_blocks, batched_tokens);
  options.enable_prefix_caching = prefix_caching;
  options.async_scheduling = async;
  options.num_state_snapshots = num_snapshots;
  return LoadedModel::load(options, make_cpu_backend());
}

void expect_nothing_held(LoadedModel& model) {
  EXPECT_EQ(model.blocks().n_free(), model.blocks().n_blocks());
  EXPECT_EQ(model.state_slots().n_free(), model.state_slots().n_slots());
  EXPECT_EQ(model.snapshots().n_referenced(), 0);
}

class HybridPrefixCache : public testing::TestWithParam<std::string> {};

// Three prompts share `shared` tokens then differ (blocks of 8 tokens). The first computes all
// and leaves snapshots at its prompt's block boundaries; the second reuses the shared whole
// blocks if one of them ends where a snapshot is, else it snapshots the cached prefix's end for
// the third. Every completion equals the one of a model without prefix caching.
TEST_P(HybridPrefixCache, HitGivesTheOutputOfAMiss) {
  struct Case {
    int shared;
    int64_t second_hit;  // tokens the second prompt reuses
    int64_t third_hit;
  };
  // 5: less than a block. 16: two blocks, the first prompt's last boundary. 21 and 37: blocks
  // plus a part (the first prompt's boundaries lie past the divergence).
  const Case cases[] = {{5, 0, 0}, {16, 16, 16}, {21, 0, 16}, {37, 0, 32}};
  auto reference = load(GetParam(), false);
  std::mt19937 rng(31);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shared);
    auto cached = load(GetParam(), true);
    const std::vector<int32_t> shared = random_tokens(rng, c.shared);
    std::vector<int64_t> hits;
    for (int i = 0; i < 3; ++i) {
      std::vector<int32_t> prompt = shared;
      const std::vector<int32_t> tail = random_tokens(rng, 7);
      prompt.insert(prompt.end(), tail.begin(), tail.end());
      GenerationStats stats;
      const auto hit = generate(*cached, {greedy(prompt, 6)}, nullptr, &stats)[0].completions[0];
      EXPECT_EQ(hit, generate(*reference, {greedy(prompt, 6)})[0].completions[0]) << i;
      hits.push_back(stats.engine.prefix_hit_tokens);
    }
    EXPECT_EQ(hits[0], 0);
    EXPECT_EQ(hits[1], c.second_hit);
    EXPECT_EQ(hits[2] - hits[1], c.third_hit);
    expect_nothing_held(*cached);
  }
}

// A chat: each turn's prompt is the previous prompt, its answer and a new message. Each turn
// resumes from the snapshot at the previous prompt's last block boundary.
TEST_P(HybridPrefixCache, MultiTurnReusesThePreviousPrompt) {
  auto cached = load(GetParam(), true);
  auto reference = load(GetParam(), false);
  std::mt19937 rng(32);
  std::vector<int32_t> prompt = random_tokens(rng, 13);
  int64_t hit_before = 0;
  for (int turn = 0; turn < 4; ++turn) {
    SCOPED_TRACE(turn);
    GenerationStats stats;
    const auto answer = generate(*cached, {greedy(prompt, 5)}, nullptr, &stats)[0].completions[0];
    EXPECT_EQ(answer, generate(*reference, {greedy(prompt, 5)})[0].completions[0]);
    const int64_t hit = stats.engine.prefix_hit_tokens - hit_before;
    hit_before = stats.engine.prefix_hit_tokens;
    // Snapshots of the previous prompt: at its last boundary before its last token, and at its
    // end when that is a boundary.
    const int64_t previous_len = static_cast<int64_t>(prompt.size()) - 5 - 6;
    EXPECT_EQ(hit, turn == 0 ? 0 : previous_len / 8 * 8);
    prompt.insert(prompt.end(), answer.begin(), answer.end());
    const std::vector<int32_t> message = random_tokens(rng, 6);
    prompt.insert(prompt.end(), message.begin(), message.end());
  }
  expect_nothing_held(*cached);
}

// Random traffic over prompts drawn from a few shared prefixes, on a pool small enough to
// preempt and with few snapshots (evictions), with and without async scheduling (snapshots
// taken and restored while a step is in flight): every completed request equals its miss, and
// blocks, slots and snapshot references all come back.
void run_random_traffic_with_shared_prefixes(const std::string& fixture, bool async) {
  SCOPED_TRACE(async ? "async" : "sync");
  auto cached = load(fixture, true, 16, 16, 5, async);
  auto reference = load(fixture, false);
  Engine engine(*cached, nullptr);
  std::mt19937 rng(33);
  std::vector<std::vector<int32_t>> prefixes;
  for (int i = 0; i < 3; ++i)
    prefixes.push_back(random_tokens(rng, 8 + static_cast<int>(rng() % 24)));
  SharedPrefixTraffic traffic{engine, *reference, prefixes, 12, 10};
  for (int round = 0; round < 120; ++round) traffic.round(rng, static_cast<int>(rng() % 5));
  for (const auto& [id, r] : traffic.live) engine.abort_request(id);
  while (engine.has_unfinished()) engine.step();
  const EngineStats stats = engine.stats();
  EXPECT_GT(traffic.n_checked, 10);
  EXPECT_GT(stats.prefix_hit_tokens, 0);
  EXPECT_GT(stats.n_preemptions, 0);
  expect_nothing_held(*cached);
}

TEST_P(HybridPrefixCache, RandomTrafficNeverLeaksAndMatchesMisses) {
  for (const bool async : {false, true}) run_random_traffic_with_shared_prefixes(GetParam(), async);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HybridPrefixCache,
                         testing::Values("qwen3-next", "qwen3.5", "qwen3.5-moe"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase_if(name, [](char c) { return c == '-' || c == '.'; });
                           return name;
                         });

TEST(HybridPrefixCacheReport, StartUpNamesTheSnapshotBudget) {
  EngineOptions options = test_engine_options("qwen3-next", 4, 0, 64);
  options.verbose = true;
  options.num_state_snapshots = 10;
  testing::internal::CaptureStderr();
  auto model = LoadedModel::load(options, make_cpu_backend());
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("4 slots and 10 prefix snapshots"), std::string::npos) << report;
  EXPECT_EQ(report.find("prefix caching is off"), std::string::npos) << report;
  EXPECT_EQ(model->snapshots().n_snapshots(), 10);
  // conv state 160 x 3 and recurrent state 4 x 16 x 24, fp32, per layer, for 3 layers
  EXPECT_EQ(model->kv().state_bytes(), size_t{(4 + 10) * 3 * (160 * 3 + 4 * 16 * 24) * 4});
}

TEST(HybridPrefixCacheReport, NoSnapshotsTurnPrefixCachingOff) {
  EngineOptions options = test_engine_options("qwen3-next", 4, 0, 64);
  options.verbose = true;
  options.state_snapshot_fraction = 0;
  testing::internal::CaptureStderr();
  auto model = LoadedModel::load(options, make_cpu_backend());
  EXPECT_NE(testing::internal::GetCapturedStderr().find("prefix caching is off"),
            std::string::npos);
  GenerationRequest r = greedy(std::vector<int32_t>(40, 7), 2);
  generate(*model, {r});
  GenerationStats stats;
  generate(*model, {r}, nullptr, &stats);
  EXPECT_EQ(stats.engine.prefix_hit_tokens, 0);
}

}  // namespace
}  // namespace hadron
