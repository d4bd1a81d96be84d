// FP8 on the CPU against the unquantized model: linear weights kept in FP8 (`--quantization
// fp8` on bf16 checkpoints: per-channel weights quantized at load, per-token activations) and
// the FP8 KV cache (`--kv-cache-dtype fp8`). Logits error, next-token KL divergence and top-1
// agreement, teacher-forced, and greedy continuations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "engine/kv_fp8_check.h"
#include "fixture_util.h"

namespace hadron {
namespace {

std::unique_ptr<LoadedModel> load(const std::string& dir, bool quantize_fp8,
                                  bool kv_cache_fp8 = false) {
  EngineOptions options;
  options.model_path = dir;
  options.max_model_len = 128;
  options.max_num_seqs = 4;
  options.max_num_batched_tokens = 64;
  options.verbose = false;
  options.quantize_fp8 = quantize_fp8;
  options.kv_cache_fp8 = kv_cache_fp8;
  return LoadedModel::load(options, make_cpu_backend());
}

struct Agreement {
  double rms_error = 0;      // rms(fp8 - reference) / rms(reference) over all logits
  double top1 = 0;           // fraction of positions whose argmax agrees
  double kl = 0;             // mean KL(reference || fp8) of the next-token distributions
  double greedy_tokens = 0;  // fraction of greedy continuation tokens equal, up to the first miss
};

int64_t argmax(const float* row, int64_t n) { return std::max_element(row, row + n) - row; }

// KL(softmax(p) || softmax(q)) of two logit rows of n.
double kl_divergence(const float* p, const float* q, int64_t n) {
  const double p_max = *std::max_element(p, p + n), q_max = *std::max_element(q, q + n);
  double p_sum = 0, q_sum = 0;
  for (int64_t i = 0; i < n; ++i) p_sum += std::exp(p[i] - p_max), q_sum += std::exp(q[i] - q_max);
  double kl = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double log_p = p[i] - p_max - std::log(p_sum), log_q = q[i] - q_max - std::log(q_sum);
    kl += std::exp(log_p) * (log_p - log_q);
  }
  return kl;
}

// The two models on the fixture's sequences (teacher-forced) and its prompts (greedy).
Agreement compare(LoadedModel& reference, LoadedModel& fp8, const testing::Fixture& fixture) {
  const int64_t vocab = reference.config().vocab_size;
  double diff_sq = 0, ref_sq = 0, rows = 0, agree = 0, same = 0, generated = 0, kl = 0;
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < fixture.prompts.size(); ++i) {
    const std::vector<int32_t> tokens = fixture.sequence(i);
    const std::vector<float> want = score(reference, tokens), got = score(fp8, tokens);
    for (size_t j = 0; j < want.size(); ++j) {
      diff_sq += (double{got[j]} - want[j]) * (double{got[j]} - want[j]);
      ref_sq += double{want[j]} * want[j];
    }
    for (size_t r = 0; r < tokens.size(); ++r, ++rows) {
      agree += argmax(&want[r * vocab], vocab) == argmax(&got[r * vocab], vocab);
      kl += kl_divergence(&want[r * vocab], &got[r * vocab], vocab);
    }
    GenerationRequest request{fixture.prompts[i], {}};
    request.params.max_tokens = 12;
    request.params.ignore_eos = true;
    requests.push_back(request);
  }
  const std::vector<GenerationResult> a = generate(reference, requests),
                                      b = generate(fp8, requests);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<int32_t>&x = a[i].completions[0], &y = b[i].completions[0];
    size_t n = 0;
    while (n < x.size() && n < y.size() && x[n] == y[n]) ++n;
    same += n, generated += x.size();
  }
  return {std::sqrt(diff_sq / ref_sq), agree / rows, kl / rows, same / generated};
}

void report(const char* what, const Agreement& a) {
  std::printf(
      "%s: logits rms error / rms %.4f, top-1 agreement %.3f, mean KL %.2e, greedy "
      "prefix %.3f\n",
      what, a.rms_error, a.top1, a.kl, a.greedy_tokens);
}

// Random weights: per-channel weight and per-token activation roundings, ~2.4% rms each
// (fp8_reference_test), in 8 projections in sequence: sqrt(16) x 2.4% ~ 10% (measured 9.4%);
// bounded at twice that as the block-FP8 fixture test is. Near-tied random logits flip top-1 at
// some positions (measured 90.5% agree; bound 80%); greedy continuations diverge early (42% of
// tokens before the first miss), so they are reported only.
TEST(Fp8LinearFixture, OnlineQuantizationOfTheTiedFixture) {
  const std::string dir = testing::fixture_dir("qwen3-tied");
  const auto reference = load(dir, false), fp8 = load(dir, true);
  EXPECT_LT(fp8->weight_bytes(), reference->weight_bytes());
  const Agreement a = compare(*reference, *fp8, testing::read_fixture("qwen3-tied"));
  report("qwen3-tied --quantization fp8", a);
  EXPECT_GT(a.rms_error, 0.0);
  EXPECT_LE(a.rms_error, 0.2);
  EXPECT_GE(a.top1, 0.8);
}

// The trained default model (8 layers, 32 projections) against its bf16 weights: measured
// 2.05% rms logits error, every teacher-forced top-1 (77 positions) and every greedy token (3 x
// 12) equal. Bounds: 5% rms; 95% top-1 (3 flips); 75% of greedy tokens before the first miss.
TEST(Fp8LinearFixture, OnlineQuantizationOfTheDefaultModel) {
  const std::string dir = std::string(HADRON_SOURCE_DIR) + "/models/default";
  const auto reference = load(dir, false), fp8 = load(dir, true);
  EXPECT_LT(fp8->weight_bytes(), reference->weight_bytes());
  const Agreement a = compare(*reference, *fp8, testing::read_fixture("default-model"));
  report("models/default --quantization fp8", a);
  EXPECT_GT(a.rms_error, 0.0);
  EXPECT_LE(a.rms_error, 0.05);
  EXPECT_GE(a.top1, 0.95);
  EXPECT_GE(a.greedy_tokens, 0.75);
}

// The FP8 KV cache (e4m3 at scale 1: one rounding of each cached k and v value, 2^-4 relative
// at most, coarser below 2^-6) against the f32 cache. Default model, measured: 1.18% rms logits
// error, mean KL 7.0e-4, 76 of 77 top-1 equal, 86% of greedy tokens before the first miss (one
// near-tied position flips and the continuation moves on), reported only. Bounds: 3% rms, KL
// 5e-3, 95% top-1.
TEST(Fp8KvCache, DefaultModelScoresLikeTheF32Cache) {
  const std::string dir = std::string(HADRON_SOURCE_DIR) + "/models/default";
  const auto reference = load(dir, false), fp8 = load(dir, false, true);
  EXPECT_EQ(fp8->kv().k_cache(0).dtype, DType::F8_E4M3);
  const Agreement a = compare(*reference, *fp8, testing::read_fixture("default-model"));
  report("models/default --kv-cache-dtype fp8", a);
  EXPECT_GT(a.rms_error, 0.0);
  EXPECT_LE(a.rms_error, 0.03);
  EXPECT_LE(a.kl, 5e-3);
  EXPECT_GE(a.top1, 0.95);
}

// Random weights, near-tied logits: measured 4.5% rms, mean KL 6.4e-4, 93.7% top-1. Bounds: 10%
// rms, KL 5e-3, 85% top-1.
TEST(Fp8KvCache, TiedFixtureScoresLikeTheF32Cache) {
  const std::string dir = testing::fixture_dir("qwen3-tied");
  const auto reference = load(dir, false), fp8 = load(dir, false, true);
  const Agreement a = compare(*reference, *fp8, testing::read_fixture("qwen3-tied"));
  report("qwen3-tied --kv-cache-dtype fp8", a);
  EXPECT_GT(a.rms_error, 0.0);
  EXPECT_LE(a.rms_error, 0.1);
  EXPECT_LE(a.kl, 5e-3);
  EXPECT_GE(a.top1, 0.85);
}

// The start-up check's probe (pseudo-random ids: flatter distributions than text) on the
// default model, whose FP8 pool was compared above on real text. Measured: mean KL 9.1e-4,
// top-1 0.994 over 160 positions; bounds as above (KL 5e-3) and 90% top-1.
TEST(Fp8KvCache, StartUpCheckMeasuresTheProbe) {
  const std::string dir = std::string(HADRON_SOURCE_DIR) + "/models/default";
  EXPECT_FALSE(check_fp8_kv_cache(*load(dir, false)).has_value());
  const auto fp8 = load(dir, false, true);
  const std::optional<KvCacheAgreement> check = check_fp8_kv_cache(*fp8);
  ASSERT_TRUE(check.has_value());
  std::printf("start-up check, models/default: %lld positions, mean KL %.2e, top-1 %.3f\n",
              static_cast<long long>(check->positions), check->mean_kl, check->top1);
  EXPECT_EQ(check->positions, 32 + 128);  // the short prompt and --max-model-len 128
  EXPECT_GT(check->mean_kl, 0.0);
  EXPECT_LE(check->mean_kl, 5e-3);
  EXPECT_GE(check->top1, 0.9);
}

}  // namespace
}  // namespace hadron
