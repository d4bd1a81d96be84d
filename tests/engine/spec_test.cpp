// Speculative decoding (n-gram) on the CPU: the flag's checks, the lookup, and the engine's
// promises: greedy and seeded outputs equal those without speculation (sync and async
// scheduling), sampled outputs follow the same distribution, stops inside an accepted run
// truncate it, and no KV block leaks under random accept/reject patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "engine/generator.h"
#include "engine/spec_config.h"
#include "engine/spec_decode.h"
#include "engine/spec_ngram.h"
#include "engine/tokenizer_detokenizer.h"
#include "engine_test_util.h"
#include "tokenizer/tokenizer.h"

namespace hadron {
namespace {

TEST(SpecConfig, ParsesVllmFieldsAndRefusesTheRest) {
  const SpeculativeConfig c = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3})");
  EXPECT_EQ(c.num_speculative_tokens, 4);
  EXPECT_EQ(c.prompt_lookup_max, 3);
  EXPECT_EQ(c.prompt_lookup_min, 2);
  EXPECT_EQ(parse_speculative_config(R"({"method":"ngram","num_speculative_tokens":1,
                                         "prompt_lookup_min":7})")
                .prompt_lookup_max,
            7);
  for (const char* bad :
       {R"({"method": "mtp", "num_speculative_tokens": 1})",
        R"({"method": "eagle3", "num_speculative_tokens": 1})",
        R"({"method": "medusa", "num_speculative_tokens": 1})", R"({"num_speculative_tokens": 1})",
        R"({"method": "ngram"})", R"({"method": "ngram", "num_speculative_tokens": 0})",
        R"({"method": "ngram", "num_speculative_tokens": 2.5})",
        R"({"method": "ngram", "num_speculative_tokens": 2, "model": "x"})",
        R"({"method": "ngram", "num_speculative_tokens": 2,
                              "prompt_lookup_min": 4, "prompt_lookup_max": 3})",
        "[1]", "{"})
    EXPECT_THROW(parse_speculative_config(bad), InputError) << bad;
  try {
    parse_speculative_config(R"({"method": "mtp", "num_speculative_tokens": 1})");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not implemented yet"), std::string::npos) << e.what();
  }
}

TEST(SpecNgram, LongestSuffixLatestOccurrence) {
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 9, 2, 3, 5, 6, 7, 1, 2, 3};
  // "1 2 3" (n = 3) recurs at 0, followed by 4 9 2; "2 3" alone would pick 5 6 7 (latest).
  EXPECT_EQ(propose_ngram(tokens, 2, 3, 3), (std::vector<int32_t>{4, 9, 2}));
  EXPECT_EQ(propose_ngram(tokens, 2, 2, 3), (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(propose_ngram(tokens, 4, 5, 3), std::vector<int32_t>{});
  EXPECT_EQ(propose_ngram(tokens, 1, 3, 0), std::vector<int32_t>{});
  // A match near the end proposes what follows it, up to the end.
  EXPECT_EQ(propose_ngram(std::vector<int32_t>{5, 5, 5}, 1, 2, 4), (std::vector<int32_t>{5}));
}

SpeculativeConfig ngram_config(int64_t k) {
  SpeculativeConfig config;
  config.num_speculative_tokens = k;
  config.disable_by_batch_size = 1 << 20;  // the tests batch many sequences on purpose
  config.weigh_step_costs = false;         // drafts regardless of this machine's timings
  return config;
}

std::unique_ptr<LoadedModel> load(const std::string& model_path, bool async,
                                  std::optional<SpeculativeConfig> spec, int64_t max_num_seqs = 40,
                                  int64_t num_kv_blocks = 0) {
  EngineOptions options = test_engine_options("", max_num_seqs, num_kv_blocks, 64);
  options.model_path = model_path;
  options.max_model_len = 160;
  options.async_scheduling = async;
  options.speculative = spec;
  return LoadedModel::load(options, make_cpu_backend());
}

std::string fixture_path(const std::string& name) {
  return std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/" + name;
}

// A prompt that repeats itself (what n-gram lookup feeds on): a random phrase three times.
std::vector<int32_t> repetitive_prompt(std::mt19937& rng, int phrase_len, int64_t vocab) {
  std::vector<int32_t> phrase(phrase_len);
  for (int32_t& t : phrase) t = 3 + static_cast<int32_t>(rng() % std::min<int64_t>(vocab - 3, 500));
  std::vector<int32_t> prompt;
  for (int copy = 0; copy < 3; ++copy) prompt.insert(prompt.end(), phrase.begin(), phrase.end());
  prompt.resize(prompt.size() - phrase_len / 2);  // ends inside the third copy
  return prompt;
}

std::vector<GenerationRequest> mixed_batch(std::mt19937& rng, int64_t vocab, int n) {
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < n; ++i) {
    GenerationRequest r{repetitive_prompt(rng, 6 + static_cast<int>(rng() % 10), vocab), {}};
    r.params.max_tokens = 20 + static_cast<int64_t>(rng() % 40);
    r.params.ignore_eos = true;
    if (i % 3 == 1) {  // seeded sampling with every filter
      r.params.temperature = 0.9f;
      r.params.top_k = 30;
      r.params.top_p = 0.9f;
      r.params.min_p = 0.02f;
      r.params.seed = 500 + i;
    }
    if (i % 4 == 2) {  // penalties and logprobs (host sampling)
      r.params.repetition_penalty = 1.2f;
      r.params.presence_penalty = 0.3f;
      r.params.logprobs = 2;
    }
    batch.push_back(std::move(r));
  }
  return batch;
}

class SpecEquality : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

// Greedy and seeded outputs, finish reasons and logprobs equal those without speculation,
// with batch mates, with synchronous and with async scheduling.
TEST_P(SpecEquality, OutputsEqualThoseWithoutSpeculation) {
  const auto& [model_name, async] = GetParam();
  const std::string path = model_name == "default"
                               ? std::string(HADRON_SOURCE_DIR) + "/models/default"
                               : fixture_path(model_name);
  auto plain = load(path, async, std::nullopt);
  auto spec = load(path, async, ngram_config(3));
  std::mt19937 rng(31);
  const auto batch = mixed_batch(rng, plain->config().vocab_size, 9);
  const auto expected = generate(*plain, batch);
  GenerationStats stats;
  const auto results = generate(*spec, batch, nullptr, &stats);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(results[i].completions, expected[i].completions) << "request " << i;
    EXPECT_EQ(results[i].finish_reasons, expected[i].finish_reasons) << "request " << i;
  }
  const SpecStats& s = stats.engine.spec;
  std::printf("%s: %lld drafts, %lld of %lld draft tokens accepted\n", model_name.c_str(),
              static_cast<long long>(s.n_drafts), static_cast<long long>(s.n_accepted_tokens),
              static_cast<long long>(s.n_draft_tokens));
  EXPECT_GT(s.n_accepted_tokens, 0);                 // drafts ran and some were kept
  EXPECT_LT(s.n_accepted_tokens, s.n_draft_tokens);  // and some were rolled back
  EXPECT_EQ(spec->blocks().n_free(), spec->blocks().n_blocks());
}

INSTANTIATE_TEST_SUITE_P(Models, SpecEquality,
                         ::testing::Combine(::testing::Values("default", "qwen3-gqa4", "llama3",
                                                              "qwen3-moe"),
                                            ::testing::Bool()));

// Logprobs are the target model's, unchanged.
TEST(SpecEngine, LogprobsEqualThoseWithoutSpeculation) {
  const std::string path = fixture_path("qwen3-gqa4");
  std::mt19937 rng(32);
  GenerationRequest r{repetitive_prompt(rng, 8, 500), {}};
  r.params.max_tokens = 30;
  r.params.ignore_eos = true;
  r.params.logprobs = 3;
  auto collect = [&](LoadedModel& model) {
    Engine engine(model, nullptr);
    engine.add_request(0, r.prompt, r.params);
    std::vector<Logprobs> all;
    while (engine.has_unfinished())
      for (RequestOutput& out : engine.step())
        all.insert(all.end(), out.logprobs.begin(), out.logprobs.end());
    return all;
  };
  auto plain = load(path, false, std::nullopt);
  auto spec = load(path, false, ngram_config(4));
  const auto expected = collect(*plain), got = collect(*spec);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].chosen.token, expected[i].chosen.token);
    EXPECT_NEAR(got[i].chosen.logprob, expected[i].chosen.logprob, 1e-4) << i;
    ASSERT_EQ(got[i].top.size(), expected[i].top.size());
    for (size_t j = 0; j < got[i].top.size(); ++j)
      EXPECT_EQ(got[i].top[j].token, expected[i].top[j].token);
  }
}

// P(chi-square with `df` degrees of freedom > x): the regularized upper incomplete gamma
// Q(df / 2, x / 2), by its series below a + 1 and its continued fraction above.
double chi_square_p_value(double x, int df) {
  const double a = df / 2.0, z = x / 2.0;
  if (z <= 0) return 1.0;
  const double log_front = a * std::log(z) - z - std::lgamma(a);
  if (z < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 500; ++n) sum += term *= z / (a + n);
    return 1.0 - sum * std::exp(log_front);
  }
  double b = z + 1 - a, c = 1e300, d = 1 / b, h = d;  // Lentz's method
  for (int n = 1; n < 500; ++n) {
    const double an = -n * (n - a);
    b += 2;
    d = 1 / (an * d + b);
    c = b + an / c;
    h *= d * c;
  }
  return std::exp(log_front) * h;
}

// Sampled continuations are distributed as without speculation: a chi-square test of
// homogeneity over the first four tokens of 400 seeds per arm (disjoint seeds: with equal
// seeds the outputs are equal, which the equality test checks). models/default continuing a
// verse the prompt holds twice accepts some drafts and rejects others.
TEST(SpecEngine, SampledOutputsFollowTheTargetDistribution) {
  const std::string path = std::string(HADRON_SOURCE_DIR) + "/models/default";
  auto plain = load(path, false, std::nullopt);
  auto spec = load(path, false, ngram_config(3));
  const std::string verse =
      "And the LORD spake unto Moses, saying, Speak unto the children of Israel, that they "
      "bring me an offering.\n";
  const std::vector<int32_t> prompt = Tokenizer::load(path).encode(verse + verse, false);
  constexpr int kSeeds = 400;
  auto outcomes = [&](LoadedModel& model, uint64_t first_seed, GenerationStats* stats) {
    std::vector<GenerationRequest> batch;
    for (int i = 0; i < kSeeds; ++i) {
      GenerationRequest r{prompt, {}};
      r.params.max_tokens = 4;
      r.params.ignore_eos = true;
      r.params.temperature = 0.8f;
      r.params.top_k = 8;
      r.params.seed = first_seed + i;
      batch.push_back(std::move(r));
    }
    std::map<std::vector<int32_t>, int> counts;
    for (const GenerationResult& r : generate(model, batch, nullptr, stats))
      ++counts[r.completions[0]];
    return counts;
  };
  GenerationStats stats;
  auto without = outcomes(*plain, 1, nullptr);
  auto with = outcomes(*spec, 1'000'000, &stats);
  // Categories with fewer than 10 outcomes over both arms pool into one.
  std::map<std::vector<int32_t>, std::pair<int, int>> table;
  for (const auto& [key, n] : without) table[key].first += n;
  for (const auto& [key, n] : with) table[key].second += n;
  std::vector<std::pair<int, int>> cells;
  std::pair<int, int> rare{0, 0};
  for (const auto& [key, pair] : table) {
    if (pair.first + pair.second >= 10) {
      cells.push_back(pair);
    } else {
      rare.first += pair.first;
      rare.second += pair.second;
    }
  }
  if (rare.first + rare.second > 0) cells.push_back(rare);
  double chi2 = 0;
  for (const auto& [a, b] : cells) {
    const double expected = (a + b) / 2.0;  // equal arms
    chi2 += (a - expected) * (a - expected) / expected + (b - expected) * (b - expected) / expected;
  }
  const int df = static_cast<int>(cells.size()) - 1;
  const double p = chi_square_p_value(chi2, df);
  const SpecStats& s = stats.engine.spec;
  std::printf(
      "chi-square %.2f, %d degrees of freedom, p = %.3f; %lld of %lld draft tokens "
      "accepted\n",
      chi2, df, p, static_cast<long long>(s.n_accepted_tokens),
      static_cast<long long>(s.n_draft_tokens));
  EXPECT_GE(df, 5);  // the outcomes do vary
  EXPECT_GT(p, 0.001);
  EXPECT_GT(s.n_accepted_tokens, s.n_draft_tokens / 10);  // drafts were kept often
  EXPECT_LT(s.n_accepted_tokens, s.n_draft_tokens);       // and rejected too
}

TEST(SpecStatistics, ChiSquarePValueMatchesKnownQuantiles) {
  EXPECT_NEAR(chi_square_p_value(3.841, 1), 0.05, 1e-3);
  EXPECT_NEAR(chi_square_p_value(18.307, 10), 0.05, 1e-3);
  EXPECT_NEAR(chi_square_p_value(2.558, 10), 0.99, 1e-3);
  EXPECT_NEAR(chi_square_p_value(124.342, 100), 0.05, 1e-3);
}

// Random add / step / abort traffic with drafts accepted and rejected (greedy and sampled,
// preemptions from a small pool): every block is free again at the end, and KV blocks that
// held rejected drafts and went back to the prefix cache serve later hits correctly.
TEST(SpecEngine, RandomAcceptRejectTrafficNeverLeaksBlocks) {
  auto model = load(fixture_path("qwen3-gqa4"), false, ngram_config(4), 6, 20);
  Engine engine(*model, nullptr);
  std::mt19937 rng(34);
  uint64_t next_id = 0;
  std::vector<uint64_t> live;
  for (int round = 0; round < 300; ++round) {
    const int action = static_cast<int>(rng() % 4);
    if (action == 0) {
      SamplingParams params;
      params.max_tokens = 1 + rng() % 70;
      params.ignore_eos = true;
      if (rng() % 2) {
        params.temperature = 0.7f;
        params.seed = rng();
      }
      engine.add_request(next_id, repetitive_prompt(rng, 3 + rng() % 12, 500), params);
      live.push_back(next_id++);
    } else if (action == 1 && !live.empty()) {
      const size_t victim = rng() % live.size();
      engine.abort_request(live[victim]);
      live.erase(live.begin() + victim);
    } else {
      for (const RequestOutput& out : engine.step())
        if (out.finished) std::erase(live, out.request_id);
    }
  }
  for (uint64_t id : live) engine.abort_request(id);
  while (engine.has_unfinished()) engine.step();
  const EngineStats stats = engine.stats();
  EXPECT_GT(stats.spec.n_accepted_tokens, 0);
  EXPECT_LT(stats.spec.n_accepted_tokens, stats.spec.n_draft_tokens);
  EXPECT_GT(stats.n_preemptions, 0);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

TEST(SpecEngine, PrefixHitsOnBlocksWrittenByVerificationEqualMisses) {
  const std::string path = fixture_path("qwen3-gqa4");
  auto spec = load(path, false, ngram_config(4));
  std::mt19937 rng(35);
  GenerationRequest first{repetitive_prompt(rng, 7, 500), {}};
  first.params.max_tokens = 60;
  first.params.ignore_eos = true;
  GenerationStats stats;
  const auto output = generate(*spec, {first}, nullptr, &stats)[0].completions[0];
  ASSERT_GT(stats.engine.spec.n_accepted_tokens, 0);
  GenerationRequest second = first;
  second.prompt.insert(second.prompt.end(), output.begin(), output.begin() + 50);
  second.params.max_tokens = 20;
  const int64_t hits_before = spec->blocks().stats().hit_tokens;
  const auto hit = generate(*spec, {second})[0].completions[0];
  EXPECT_GE(spec->blocks().stats().hit_tokens - hits_before, 56);  // 7 blocks of 8
  EngineOptions options = test_engine_options("qwen3-gqa4", 4, 0, 64);
  options.max_model_len = 160;
  options.enable_prefix_caching = false;
  auto plain = LoadedModel::load(options, make_cpu_backend());
  EXPECT_EQ(hit, generate(*plain, {second})[0].completions[0]);
}

struct Streamed {
  std::vector<std::vector<int32_t>> steps;  // tokens per step
  std::string text;
  FinishReason reason = FinishReason::kNone;
  std::string stop_string;
};

Streamed stream(LoadedModel& model, const Detokenizer& detokenizer,
                const std::vector<int32_t>& prompt, const SamplingParams& params) {
  Engine engine(model, &detokenizer);
  engine.add_request(0, prompt, params);
  Streamed result;
  while (engine.has_unfinished())
    for (const RequestOutput& out : engine.step()) {
      result.steps.push_back(out.token_ids);
      result.text += out.text;
      if (out.finished) {
        result.reason = out.finish_reason;
        result.stop_string = out.stop_string;
      }
    }
  return result;
}

// A stop string or stop token met inside a run of accepted drafts ends the output there, as
// without speculation: the tokens after it in the run are dropped, the text stops before it.
TEST(SpecEngine, StopInsideAnAcceptedRunTruncatesIt) {
  const std::string path = std::string(HADRON_SOURCE_DIR) + "/models/default";
  const Tokenizer tokenizer = Tokenizer::load(path);
  const TokenizerDetokenizer detokenizer(tokenizer);
  auto plain = load(path, false, std::nullopt);
  auto spec = load(path, false, ngram_config(4));
  const std::string verse =
      "And the LORD spake unto Moses, saying, Speak unto the children of Israel, that they "
      "bring me an offering.\n";
  const std::vector<int32_t> prompt = tokenizer.encode(verse + verse, false);
  SamplingParams params;
  params.max_tokens = 40;
  params.ignore_eos = true;
  const Streamed full = stream(*spec, detokenizer, prompt, params);
  // The first step that produced three tokens or more (two accepted drafts and one more).
  std::vector<int32_t> output;
  size_t run_end = 0;
  for (const auto& step : full.steps) {
    output.insert(output.end(), step.begin(), step.end());
    if (step.size() >= 3 && run_end == 0) run_end = output.size();
  }
  ASSERT_GT(run_end, 0u) << "no run of accepted drafts";
  const size_t stop_at = run_end - 2;  // a token inside the run, not its last
  const std::string through =
      tokenizer.decode(std::span(output).first(stop_at + 1), /*skip_special_tokens=*/true);
  const std::string before =
      tokenizer.decode(std::span(output).first(stop_at), /*skip_special_tokens=*/true);
  ASSERT_GT(through.size(), before.size());
  // The shortest end of the text through that token found nowhere earlier: it completes there.
  size_t len = through.size() - before.size();
  while (len < through.size() &&
         through.find(through.substr(through.size() - len)) != through.size() - len)
    ++len;
  SamplingParams with_stop = params;
  with_stop.stop = {through.substr(through.size() - len)};
  ASSERT_EQ(through.find(with_stop.stop[0]), through.size() - len);
  for (LoadedModel* model : {plain.get(), spec.get()}) {
    const Streamed got = stream(*model, detokenizer, prompt, with_stop);
    std::vector<int32_t> tokens;
    for (const auto& step : got.steps) tokens.insert(tokens.end(), step.begin(), step.end());
    EXPECT_EQ(tokens, std::vector<int32_t>(output.begin(), output.begin() + stop_at + 1));
    EXPECT_EQ(got.text, through.substr(0, through.size() - len));
    EXPECT_EQ(got.reason, FinishReason::kStop);
    EXPECT_EQ(got.stop_string, with_stop.stop[0]);
  }
  SamplingParams with_stop_token = params;
  with_stop_token.stop_token_ids = {output[stop_at]};
  const size_t first = std::find(output.begin(), output.end(), output[stop_at]) - output.begin();
  const Streamed got = stream(*spec, detokenizer, prompt, with_stop_token);
  std::vector<int32_t> tokens;
  for (const auto& step : got.steps) tokens.insert(tokens.end(), step.begin(), step.end());
  EXPECT_EQ(tokens, std::vector<int32_t>(output.begin(), output.begin() + first + 1));
  EXPECT_EQ(got.reason, FinishReason::kStop);
}

// The policy: a sequence whose drafts are rejected pauses, then probes with a shorter draft;
// acceptance is counted by position.
TEST(SpecPolicy, RejectionsPauseThenProbeWithAShorterDraft) {
  SpecDecoder decoder(ngram_config(4));
  SpecSeqState state;
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2};
  EXPECT_TRUE(decoder.ready(state));
  EXPECT_EQ(decoder.propose(tokens, state, 4), (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(decoder.propose(tokens, state, 2), (std::vector<int32_t>{3, 4}));
  decoder.record(state, 4, 2, 1);  // rate 0.75
  EXPECT_EQ(decoder.propose(tokens, state, 4).size(), 3u);
  decoder.record(state, 3, 0, 1);  // 0.375
  decoder.record(state, 2, 0, 1);  // 0.1875: pause
  for (int step = 0; step < 8; ++step) EXPECT_FALSE(decoder.ready(state)) << step;
  EXPECT_TRUE(decoder.ready(state));
  EXPECT_EQ(decoder.propose(tokens, state, 4).size(), 2u);  // probing from 0.5
  EXPECT_EQ(decoder.stats().n_drafts, 3);
  EXPECT_EQ(decoder.stats().n_draft_tokens, 9);
  EXPECT_EQ(decoder.stats().accepted_per_position, (std::vector<int64_t>{1, 1, 0, 0}));
}

// No step drafts while more sequences run than disable_by_batch_size.
TEST(SpecPolicy, LargeBatchesDoNotDraft) {
  const std::string path = fixture_path("qwen3-gqa4");
  std::mt19937 rng(36);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 4; ++i) {
    GenerationRequest r{repetitive_prompt(rng, 5, 500), {}};
    r.params.max_tokens = 30;
    r.params.ignore_eos = true;
    batch.push_back(std::move(r));
  }
  for (int64_t limit : {3, 4}) {
    SpeculativeConfig config = ngram_config(3);
    config.disable_by_batch_size = limit;
    auto model = load(path, false, config);
    GenerationStats stats;
    generate(*model, batch, nullptr, &stats);
    if (limit == 3)
      EXPECT_EQ(stats.engine.spec.n_drafts, 0);
    else
      EXPECT_GT(stats.engine.spec.n_drafts, 0);
  }
}

TEST(SpecEngine, RefusesModelsWithLinearAttentionState) {
  auto model = load(fixture_path("qwen3-next"), false, ngram_config(2), 4);
  try {
    Engine engine(*model, nullptr);
    ADD_FAILURE() << "a DeltaNet hybrid was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("DeltaNet"), std::string::npos) << e.what();
  }
}

// Step costs fitted from decode steps: a CPU-like machine where a token costs as much as the
// step's fixed part, and a GPU-like one where extra tokens are nearly free.
TEST(SpecPolicy, StepCostModelFindsWhereDraftsPay) {
  StepCostModel costs;
  EXPECT_EQ(costs.break_even(1), 0);  // nothing known yet
  for (int step = 0; step < 40; ++step) costs.observe(1, 2e-3);
  EXPECT_EQ(costs.break_even(1), 0);  // only plain steps: no slope yet
  for (int step = 0; step < 40; ++step)
    costs.observe(step % 4 == 0 ? 4 : 1, step % 4 == 0 ? 5e-3 : 2e-3);
  EXPECT_NEAR(costs.break_even(1), 0.5, 0.02);  // 1 ms per token, 1 ms fixed
  EXPECT_NEAR(costs.break_even(8), 8.0 / 9, 0.02);
  StepCostModel gpu;
  for (int step = 0; step < 80; ++step) gpu.observe(step % 2 ? 4 : 1, step % 2 ? 10.3e-3 : 10e-3);
  EXPECT_LT(gpu.break_even(1), 0.02);
  // With costs weighed, a sequence accepting 60% pauses where a token costs 0.5 of a step's
  // time at batch 8 (break-even 0.89) but not at batch 1 (0.5).
  SpeculativeConfig config = ngram_config(4);
  config.weigh_step_costs = true;
  SpecDecoder decoder(config);
  for (int step = 0; step < 40; ++step)
    decoder.observe_step(step % 4 == 0 ? 4 : 1, step % 4 == 0 ? 5e-3 : 2e-3);
  SpecSeqState alone, batched;
  decoder.record(alone, 5, 3, 1);  // acceptance 0.8
  decoder.record(alone, 5, 2, 1);  // 0.6 > 0.5
  EXPECT_TRUE(decoder.ready(alone));
  decoder.record(batched, 5, 3, 8);  // 0.8 < 0.89
  EXPECT_FALSE(decoder.ready(batched));
}

}  // namespace
}  // namespace hadron
