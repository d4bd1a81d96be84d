// Engine properties on the CPU backend with a tiny fixture model: a sequence's output does
// not depend on its batch mates, on preemption or on prefix-cache hits; seeds reproduce;
// no KV block leaks under random add/step/abort. Every property is checked with synchronous
// and with async scheduling (step N+1 queued before step N's tokens are read back, as on GPUs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "engine/generator.h"
#include "engine/model_runner.h"
#include "engine_test_util.h"
#include "grammar/regex.h"
#include "grammar/token_mask.h"

namespace hadron {
namespace {

// Decode graphs: every batch size up to 16 (MoE layers compute padding rows like tokens), then
// multiples of 8 up to 256 and of 16 up to 512, none past the largest batch.
TEST(ModelRunnerGraphSizes, EverySizeUpTo16ThenMultiplesOf8And16) {
  std::vector<int64_t> expected;
  for (int64_t b = 1; b <= 5; ++b) expected.push_back(b);
  EXPECT_EQ(ModelRunner::graph_batch_sizes(5), expected);
  for (int64_t b = 6; b <= 16; ++b) expected.push_back(b);
  EXPECT_EQ(ModelRunner::graph_batch_sizes(23), expected);
  for (int64_t b = 24; b <= 256; b += 8) expected.push_back(b);
  for (int64_t b = 272; b <= 512; b += 16) expected.push_back(b);
  EXPECT_EQ(ModelRunner::graph_batch_sizes(1000), expected);
  EXPECT_EQ(ModelRunner::graph_batch_sizes(300).back(), 288);
}

class EngineTest : public ::testing::TestWithParam<bool> {};

// Async scheduling for the test being run (its parameter).
bool async_param() {
  const char* param = ::testing::UnitTest::GetInstance()->current_test_info()->value_param();
  return param != nullptr && std::string(param) == "true";
}

std::unique_ptr<LoadedModel> load(int64_t max_num_seqs = 40, int64_t num_kv_blocks = 0,
                                  bool prefix_caching = true, int64_t batched_tokens = 64,
                                  std::optional<bool> async = std::nullopt,
                                  int64_t kv_reserve_per_seq = 0,
                                  const std::string& fixture = "qwen3-gqa4") {
  EngineOptions options = test_engine_options(fixture, max_num_seqs, num_kv_blocks, batched_tokens);
  options.async_scheduling = async.value_or(async_param());
  options.enable_prefix_caching = prefix_caching;
  options.kv_reserve_per_seq = kv_reserve_per_seq;
  return LoadedModel::load(options, make_cpu_backend());
}

std::vector<int32_t> random_prompt(std::mt19937& rng, int min_len, int max_len) {
  std::vector<int32_t> prompt(min_len + rng() % (max_len - min_len + 1));
  for (int32_t& t : prompt) t = 3 + static_cast<int32_t>(rng() % 500);
  return prompt;
}

GenerationRequest greedy_request(std::vector<int32_t> prompt, int64_t max_tokens) {
  GenerationRequest request{std::move(prompt), {}};
  request.params.max_tokens = max_tokens;
  request.params.ignore_eos = true;
  return request;
}

void expect_same_completions(const std::vector<GenerationResult>& results,
                             const std::vector<GenerationResult>& expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(results[i].completions[0], expected[i].completions[0]) << "request " << i;
}

std::vector<int32_t> alone(LoadedModel& model, const GenerationRequest& request) {
  return generate(model, {request})[0].completions[0];
}

TEST_P(EngineTest, OutputDoesNotDependOnBatchMates) {
  auto model = load();
  std::mt19937 rng(11);
  const GenerationRequest probe = greedy_request(random_prompt(rng, 20, 30), 12);
  const std::vector<int32_t> expected = alone(*model, probe);
  for (int n_others : {1, 5, 32}) {
    std::vector<GenerationRequest> batch;
    for (int i = 0; i < n_others; ++i)
      batch.push_back(greedy_request(random_prompt(rng, 1, 40), 1 + rng() % 20));
    const size_t probe_idx = batch.size() / 2;
    batch.insert(batch.begin() + probe_idx, probe);
    const auto results = generate(*model, batch);
    EXPECT_EQ(results[probe_idx].completions[0], expected) << n_others << " others";
    EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
  }
}

TEST_P(EngineTest, PreemptedRequestsProduceTheSameOutput) {
  std::mt19937 rng(12);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 8; ++i) batch.push_back(greedy_request(random_prompt(rng, 10, 30), 30));
  auto roomy = load();
  GenerationStats roomy_stats;
  const auto expected = generate(*roomy, batch, nullptr, &roomy_stats);
  EXPECT_EQ(roomy_stats.engine.n_preemptions, 0);
  EXPECT_EQ(roomy_stats.engine.n_recomputed_tokens, 0);
  // 13 blocks of 8 tokens: one sequence needs up to 8, so eight of them must take turns.
  auto tight = load(40, 13);
  GenerationStats stats;
  const auto results = generate(*tight, batch, nullptr, &stats);
  EXPECT_GT(stats.engine.n_preemptions, 0);
  EXPECT_GT(stats.engine.n_recomputed_tokens, 0);
  expect_same_completions(results, expected);
  EXPECT_EQ(tight->blocks().n_free(), tight->blocks().n_blocks());
}

// --kv-reserve-per-seq: admission waits while the running sequences would have less than
// the reserve each to grow into, so fewer of them are preempted later; outputs are the same.
TEST_P(EngineTest, GrowthReserveAdmitsLaterAndPreemptsLess) {
  std::mt19937 rng(12);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 8; ++i) batch.push_back(greedy_request(random_prompt(rng, 10, 30), 30));
  GenerationStats plain_stats;
  auto plain = load(40, 13);
  const auto expected = generate(*plain, batch, nullptr, &plain_stats);
  ASSERT_GT(plain_stats.engine.n_preemptions, 0);
  int64_t previous = plain_stats.engine.n_preemptions;
  // 2 and 4 blocks of 8 tokens per running sequence, of 13 blocks.
  for (const int64_t reserve : {16, 32}) {
    SCOPED_TRACE(testing::Message() << "reserve " << reserve);
    auto reserved = load(40, 13, true, 64, std::nullopt, reserve);
    GenerationStats stats;
    const auto results = generate(*reserved, batch, nullptr, &stats);
    std::printf("reserve %lld tokens: %lld preemptions (none: %lld)\n",
                static_cast<long long>(reserve), static_cast<long long>(stats.engine.n_preemptions),
                static_cast<long long>(plain_stats.engine.n_preemptions));
    EXPECT_LT(stats.engine.n_preemptions, previous);
    previous = stats.engine.n_preemptions;
    for (size_t i = 0; i < batch.size(); ++i)
      EXPECT_EQ(results[i].completions[0], expected[i].completions[0]) << "request " << i;
    EXPECT_EQ(reserved->blocks().n_free(), reserved->blocks().n_blocks());
  }
}

// Every step that runs is counted as decode-only, mixed or prefill-only, with its tokens.
TEST_P(EngineTest, StepKindsCountEveryStepAndToken) {
  std::mt19937 rng(16);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 6; ++i) batch.push_back(greedy_request(random_prompt(rng, 5, 40), 12));
  auto model = load(4, 0, false, 16);  // prompts in chunks of 16 beside decodes
  GenerationStats stats;
  generate(*model, batch, nullptr, &stats);
  const EngineStats& e = stats.engine;
  EXPECT_GT(e.decode_steps.n_steps, 0);
  EXPECT_GT(e.mixed_steps.n_steps, 0);
  EXPECT_GT(e.prefill_steps.n_steps, 0);
  EXPECT_LE(e.decode_steps.n_steps + e.mixed_steps.n_steps + e.prefill_steps.n_steps, e.n_steps);
  int64_t n_prompt_tokens = 0;
  for (const GenerationRequest& r : batch) n_prompt_tokens += r.prompt.size();
  // Prompts, then one token per later output (async scheduling may compute one more per
  // sequence, dropped when the sequence has stopped).
  const int64_t n_tokens =
      e.decode_steps.n_tokens + e.mixed_steps.n_tokens + e.prefill_steps.n_tokens;
  EXPECT_GE(n_tokens, n_prompt_tokens + stats.generated_tokens - 6);
  EXPECT_LE(n_tokens, n_prompt_tokens + stats.generated_tokens);
}

TEST_P(EngineTest, PrefixCacheHitEqualsMiss) {
  std::mt19937 rng(13);
  const std::vector<int32_t> shared = random_prompt(rng, 40, 40);
  auto with_suffix = [&](int32_t extra) {
    std::vector<int32_t> prompt = shared;
    prompt.push_back(extra);
    return greedy_request(prompt, 10);
  };
  auto no_cache = load(40, 0, false);
  const auto miss = alone(*no_cache, with_suffix(7));
  auto cached = load();
  alone(*cached, with_suffix(9));  // fills the cache with the shared 40-token prefix
  GenerationStats stats;
  const auto hit = generate(*cached, {with_suffix(7)}, nullptr, &stats)[0].completions[0];
  EXPECT_EQ(hit, miss);
  EXPECT_GE(stats.engine.prefix_hit_tokens, 40);
}

TEST_P(EngineTest, SeededSamplingReproducesAmongOthers) {
  auto model = load();
  std::mt19937 rng(14);
  GenerationRequest request = greedy_request(random_prompt(rng, 10, 20), 16);
  request.params.temperature = 1.0f;
  request.params.seed = 1234;
  const auto first = alone(*model, request);
  std::vector<GenerationRequest> batch = {greedy_request(random_prompt(rng, 5, 30), 9), request};
  EXPECT_EQ(generate(*model, batch)[1].completions[0], first);
  request.params.seed = 4321;
  EXPECT_NE(alone(*model, request), first);
}

TEST_P(EngineTest, SiblingsShareThePromptAndMatchASingleCompletion) {
  auto model = load();
  std::mt19937 rng(15);
  GenerationRequest request = greedy_request(random_prompt(rng, 30, 30), 8);
  const auto single = alone(*model, request);
  request.params.n = 4;
  const auto result = generate(*model, {request})[0];
  ASSERT_EQ(result.completions.size(), 4u);
  for (const auto& completion : result.completions) EXPECT_EQ(completion, single);
  request.params.temperature = 1.0f;
  request.params.seed = 3;
  const auto sampled = generate(*model, {request})[0];
  EXPECT_NE(sampled.completions[0], sampled.completions[1]);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

TEST_P(EngineTest, StopTokensMaxTokensAndMinTokens) {
  auto model = load();
  std::mt19937 rng(16);
  GenerationRequest request = greedy_request(random_prompt(rng, 12, 12), 10);
  const auto full = alone(*model, request);
  request.params.stop_token_ids = {full[2]};
  auto result = generate(*model, {request})[0];
  const size_t first_stop = std::find(full.begin(), full.end(), full[2]) - full.begin();
  EXPECT_EQ(result.completions[0].size(), first_stop + 1);
  EXPECT_EQ(result.finish_reasons[0], FinishReason::kStop);
  request.params.min_tokens = 10;
  result = generate(*model, {request})[0];
  EXPECT_EQ(result.completions[0].size(), 10u);
  EXPECT_EQ(result.finish_reasons[0], FinishReason::kLength);
}

// A reasoning model's constraint starts after its end-of-thinking token: before it the output
// is free, after it every token follows the grammar. Vocabulary: token 5 is "a", token 7 (the
// end of thinking) is special, every other token some other text; the grammar is "a+".
TEST_P(EngineTest, ConstraintStartsAfterTheEndOfReasoningToken) {
  auto model = load();
  const auto n_vocab = static_cast<int32_t>(model->config().vocab_size);
  constexpr int32_t kA = 5, kEndThink = 7;
  std::vector<std::string> bytes(n_vocab);
  for (int32_t t = 0; t < n_vocab; ++t) bytes[t] = "t" + std::to_string(t);
  bytes[kA] = "a";
  bytes[kEndThink] = "";
  const auto masker = std::make_shared<const grammar::TokenMasker>(
      std::make_shared<const grammar::Grammar>(grammar::compile_regex("a+")),
      std::make_shared<const grammar::TokenVocabulary>(bytes, std::vector<int32_t>{}));
  std::mt19937 rng(21);
  GenerationRequest request = greedy_request(random_prompt(rng, 8, 8), 6);
  request.params.constraint = masker;
  request.params.logit_bias = {{kEndThink, 50.0f}};  // the model ends its thinking at once
  const auto constrained = alone(*model, request);
  EXPECT_EQ(constrained, std::vector<int32_t>(6, kA));  // the end token is refused
  request.params.constraint_after_token = kEndThink;
  const auto after = alone(*model, request);
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(after[0], kEndThink);  // free until then
  EXPECT_EQ(std::vector<int32_t>(after.begin() + 1, after.end()), std::vector<int32_t>(5, kA));
  request.params.logit_bias.clear();  // the end never comes: nothing is constrained
  request.params.constraint_after_token = n_vocab + 1;
  EXPECT_EQ(alone(*model, request), alone(*model, greedy_request(request.prompt, 6)));
}

TEST_P(EngineTest, LogprobsMatchTeacherForcedScores) {
  auto model = load();
  std::mt19937 rng(17);
  GenerationRequest request = greedy_request(random_prompt(rng, 9, 9), 4);
  request.params.logprobs = 3;
  request.params.prompt_logprobs = 0;
  Engine engine(*model, nullptr);
  engine.add_request(0, request.prompt, request.params);
  std::vector<RequestOutput> outputs;
  while (engine.has_unfinished())
    for (RequestOutput& out : engine.step()) outputs.push_back(std::move(out));
  std::vector<int32_t> tokens = request.prompt;
  for (const RequestOutput& out : outputs) tokens.push_back(out.token_ids.at(0));
  const std::vector<float> scores = score(*model, tokens);
  const int64_t vocab = model->config().vocab_size;
  ASSERT_EQ(outputs[0].prompt_logprobs.size(), request.prompt.size() - 1);
  for (size_t i = 0; i + 1 < request.prompt.size(); ++i) {
    const Logprobs ref =
        compute_logprobs(std::span(scores).subspan(i * vocab, vocab), tokens[i + 1], 0);
    EXPECT_NEAR(outputs[0].prompt_logprobs[i].chosen.logprob, ref.chosen.logprob, 1e-4);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const size_t pos = request.prompt.size() - 1 + j;
    const Logprobs ref =
        compute_logprobs(std::span(scores).subspan(pos * vocab, vocab), tokens[pos + 1], 3);
    EXPECT_NEAR(outputs[j].logprobs.at(0).chosen.logprob, ref.chosen.logprob, 1e-4);
    EXPECT_EQ(outputs[j].logprobs[0].top[0].token, tokens[pos + 1]);  // greedy = top-1
  }
}

// max_tokens 0 (the OpenAI "echo with max_tokens 0" scoring request): the prompt is computed
// and scored, and every completion finishes by length with no token.
TEST_P(EngineTest, MaxTokensZeroScoresThePromptOnly) {
  auto model = load();
  std::mt19937 rng(18);
  GenerationRequest request = greedy_request(random_prompt(rng, 13, 13), 0);
  request.params.prompt_logprobs = 2;
  for (const int n : {1, 3}) {
    SCOPED_TRACE(n);
    request.params.n = n;
    Engine engine(*model, nullptr);
    engine.add_request(0, request.prompt, request.params);
    std::vector<RequestOutput> outputs;
    while (engine.has_unfinished())
      for (RequestOutput& out : engine.step()) outputs.push_back(std::move(out));
    ASSERT_EQ(outputs.size(), static_cast<size_t>(n));
    std::vector<int> indices;
    for (const RequestOutput& out : outputs) {
      EXPECT_TRUE(out.token_ids.empty());
      EXPECT_TRUE(out.finished);
      EXPECT_EQ(out.finish_reason, FinishReason::kLength);
      EXPECT_EQ(out.n_output_tokens, 0);
      indices.push_back(out.index);
    }
    std::sort(indices.begin(), indices.end());
    for (int i = 0; i < n; ++i) EXPECT_EQ(indices[i], i);
    // The prompt's scores, as a request that also generates gets them.
    const std::vector<float> scores = score(*model, request.prompt);
    const int64_t vocab = model->config().vocab_size;
    const auto first = std::find_if(outputs.begin(), outputs.end(),
                                    [](const RequestOutput& out) { return out.index == 0; });
    ASSERT_EQ(first->prompt_logprobs.size(), request.prompt.size() - 1);
    for (size_t i = 0; i + 1 < request.prompt.size(); ++i) {
      const Logprobs ref =
          compute_logprobs(std::span(scores).subspan(i * vocab, vocab), request.prompt[i + 1], 2);
      EXPECT_NEAR(first->prompt_logprobs[i].chosen.logprob, ref.chosen.logprob, 1e-4);
      EXPECT_EQ(first->prompt_logprobs[i].top.size(), ref.top.size());
    }
  }
  GenerationRequest plain = greedy_request(random_prompt(rng, 9, 9), 0);  // through generate()
  const GenerationResult result = generate(*model, {plain})[0];
  EXPECT_TRUE(result.completions[0].empty());
  EXPECT_EQ(result.finish_reasons[0], FinishReason::kLength);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

TEST_P(EngineTest, RandomAddStepAbortNeverLeaksBlocks) {
  auto model = load(6, 30, true, 24);
  Engine engine(*model, nullptr);
  run_random_traffic(engine, *model, 18, 300, 3, 30);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

TEST_P(EngineTest, RefusesPromptsLongerThanTheContext) {
  auto model = load();
  Engine engine(*model, nullptr);
  EXPECT_THROW(engine.add_request(0, std::vector<int32_t>(96, 5), {}), InputError);
  EXPECT_THROW(engine.add_request(1, {}, {}), InputError);
  EXPECT_THROW(engine.add_request(2, {600}, {}), InputError);
}

// Async scheduling changes when outputs are reported, never what they are.
TEST(EngineAsync, AsyncSchedulingEqualsSynchronous) {
  std::mt19937 rng(19);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 12; ++i) {
    GenerationRequest r = greedy_request(random_prompt(rng, 1, 40), 1 + rng() % 25);
    if (i % 3 == 1) {
      r.params.temperature = 0.8f;
      r.params.top_k = 20;
      r.params.seed = 100 + i;
    }
    if (i % 4 == 2) r.params.n = 2;
    batch.push_back(std::move(r));
  }
  const auto reference = alone(*load(40, 0, true, 64, false), batch[0]);
  batch[5].params.stop_token_ids = {reference.at(reference.size() / 2)};
  batch[5].prompt = batch[0].prompt;
  batch[5].params.max_tokens = batch[0].params.max_tokens;
  auto sync = load(40, 0, true, 64, false);
  auto async = load(40, 0, true, 64, true);
  const auto expected = generate(*sync, batch);
  const auto results = generate(*async, batch);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(results[i].completions, expected[i].completions) << "request " << i;
    EXPECT_EQ(results[i].finish_reasons, expected[i].finish_reasons) << "request " << i;
  }
  EXPECT_EQ(results[5].finish_reasons[0], FinishReason::kStop);
  EXPECT_EQ(async->blocks().n_free(), async->blocks().n_blocks());
}

// A latent (MLA) cache under the same engine: chunked prefill, preemption and prefix-cache
// hits leave greedy outputs as they are with a roomy cache and whole prompts. With sparse
// attention (deepseek-v3.2, glm-5: top-8 of prompts of 25 tokens) the indexer keys live in the
// same blocks and must follow the latent through all of it.
class EngineLatentCache : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineLatentCache, ChunksPreemptionAndPrefixHitsKeepOutputs) {
  const std::string mla_model = GetParam();
  std::mt19937 rng(21);
  const std::vector<int32_t> shared = random_prompt(rng, 24, 24);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 6; ++i) {
    std::vector<int32_t> prompt = i % 2 == 0 ? shared : random_prompt(rng, 16, 24);
    prompt.push_back(3 + i);
    batch.push_back(greedy_request(std::move(prompt), 12));
  }
  auto roomy = load(40, 0, false, 64, false, 0, mla_model);
  const auto expected = generate(*roomy, batch);
  // 8-token step budget: every prompt is prefilled in chunks. 14 blocks of 8 tokens: at most
  // three sequences of up to 37 tokens fit at once, so six must take turns.
  auto tight = load(40, 14, true, 8, false, 0, mla_model);
  GenerationStats stats;
  const auto results = generate(*tight, batch, nullptr, &stats);
  EXPECT_GT(stats.engine.n_preemptions, 0);
  EXPECT_GE(stats.engine.prefix_hit_tokens, 24);
  expect_same_completions(results, expected);
  EXPECT_EQ(tight->blocks().n_free(), tight->blocks().n_blocks());
}

INSTANTIATE_TEST_SUITE_P(Models, EngineLatentCache,
                         ::testing::Values("deepseek-v3", "deepseek-v3.2", "glm-5"),
                         [](const auto& info) {
                           std::string id = info.param;
                           for (char& c : id)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return id;
                         });

INSTANTIATE_TEST_SUITE_P(Scheduling, EngineTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "async" : "sync"; });

}  // namespace
}  // namespace hadron
