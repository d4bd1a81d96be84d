// hadron's CPU logits against Hugging Face transformers' fp32 logits on tiny random
// checkpoints (tools/make_fixtures.py): teacher-forced prefill, token-by-token decode through
// the paged KV cache, and greedy continuations.
//
// Metric: max |hadron - transformers| over a sequence's logits, divided by
// max |transformers logit|; must be <= 1e-3.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "fixture_util.h"

namespace hadron {
namespace {

using testing::fixture_dir;
using testing::relative_error;

constexpr double kTolerance = 1e-3;

struct FixtureCase {
  std::string name;         // tests/fixtures/<name>: reference.json and logits_<i>.npy
  std::string config_file;  // config.json (transformers 5) or config.original.json (hub style)
  std::string model_dir;    // where the weights are, relative to the source tree
  std::string skip = {};    // why the case is skipped, shown in the test output ("": run it)
};

// How gtest and ctest name a case (else its bytes).
void PrintTo(const FixtureCase& c, std::ostream* out) { *out << c.name << " " << c.config_file; }

class FixtureTest : public ::testing::TestWithParam<FixtureCase> {
 protected:
  void SetUp() override {
    if (!GetParam().skip.empty()) GTEST_SKIP() << GetParam().skip;
    EngineOptions options;
    options.model_path = std::string(HADRON_SOURCE_DIR) + "/" + GetParam().model_dir;
    options.config_path = options.model_path + "/" + GetParam().config_file;
    options.max_model_len = 128;
    options.max_num_seqs = 4;
    options.max_num_batched_tokens = 64;
    options.verbose = false;
    model_ = LoadedModel::load(options, make_cpu_backend());
    fixture_ = testing::read_fixture(GetParam().name);
  }

  const std::vector<int32_t>& prompt(size_t i) const { return fixture_.prompts[i]; }
  const std::vector<int32_t>& continuation(size_t i) const { return fixture_.continuations[i]; }
  const NpyArray& logits(size_t i) const { return fixture_.logits[i]; }
  size_t n_prompts() const { return fixture_.prompts.size(); }
  // A linear-attention state slot for a hand-made step (-1 for models without such state).
  int32_t acquire_state_slot() {
    if (!model_->state_slots().enabled()) return -1;
    const std::optional<int32_t> slot = model_->state_slots().acquire();
    EXPECT_TRUE(slot.has_value());
    return slot.value_or(-1);
  }

  std::unique_ptr<LoadedModel> model_;
  testing::Fixture fixture_;
};

TEST_P(FixtureTest, PrefillLogitsMatchTransformers) {
  for (size_t i = 0; i < n_prompts(); ++i) {
    const std::vector<int32_t> tokens = fixture_.sequence(i);
    const std::vector<float> ours = score(*model_, tokens);
    const NpyArray ref = logits(i);
    ASSERT_EQ(ref.shape[0], static_cast<int64_t>(tokens.size()));
    const double error = relative_error(ours.data(), ref, 0, ref.shape[0]);
    EXPECT_LE(error, kTolerance) << "prompt " << i;
    RecordProperty("prefill_rel_error_" + std::to_string(i), std::to_string(error));
    std::printf("[%s %s] prompt %zu prefill max|diff|/max|logit| = %.2e\n", GetParam().name.c_str(),
                GetParam().config_file.c_str(), i, error);
  }
}

TEST_P(FixtureTest, DecodeThroughKvCacheMatchesTransformers) {
  const int64_t vocab = model_->config().vocab_size;
  for (size_t i = 0; i < n_prompts(); ++i) {
    const std::vector<int32_t> tokens = fixture_.sequence(i);
    const size_t prompt_len = prompt(i).size();
    const NpyArray ref = logits(i);
    auto blocks = model_->blocks().allocate(8);
    ASSERT_TRUE(blocks);
    const int32_t slot = acquire_state_slot();
    // Prefill the prompt, then feed the continuation one token per step (teacher forcing):
    // the recurrent path of linear-attention layers.
    SequenceStep step{std::span(tokens).first(prompt_len), 0, *blocks, false, slot};
    std::vector<float> step_logits = model_->runner().step({&step, 1});
    double worst = relative_error(step_logits.data(), ref, prompt_len - 1, 1);
    for (size_t pos = prompt_len; pos < tokens.size(); ++pos) {
      step = {std::span(tokens).subspan(pos, 1), static_cast<int64_t>(pos), *blocks, false, slot};
      step_logits = model_->runner().step({&step, 1});
      ASSERT_EQ(static_cast<int64_t>(step_logits.size()), vocab);
      worst = std::max(worst, relative_error(step_logits.data(), ref, pos, 1));
    }
    model_->blocks().release(*blocks);
    model_->state_slots().release(slot);
    EXPECT_LE(worst, kTolerance) << "prompt " << i;
    std::printf("[%s %s] prompt %zu decode worst max|diff|/max|logit| = %.2e\n",
                GetParam().name.c_str(), GetParam().config_file.c_str(), i, worst);
  }
}

// A prefill split into chunks at awkward boundaries (1 token, then 2, 5, 3, ...: across KV
// blocks and the convolution's window) gives the logits of one prefill: KV and
// linear-attention state carry across steps.
TEST_P(FixtureTest, ChunkedPrefillEqualsOnePrefill) {
  const std::vector<int32_t> tokens = fixture_.sequence(n_prompts() - 1);
  const std::vector<float> whole = score(*model_, tokens);
  const int64_t vocab = model_->config().vocab_size, n = static_cast<int64_t>(tokens.size());
  auto blocks = model_->blocks().allocate(8);
  ASSERT_TRUE(blocks);
  const int32_t slot = acquire_state_slot();
  std::vector<float> chunked;
  const int64_t chunk_sizes[] = {1, 2, 5, 3, 7, 1};
  for (int64_t done = 0, c = 0; done < n; ++c) {
    const int64_t size = std::min(n - done, c < 6 ? chunk_sizes[c] : n);
    const SequenceStep step{std::span(tokens).subspan(done, size), done, *blocks, true, slot};
    const std::vector<float> logits = model_->runner().step({&step, 1});
    chunked.insert(chunked.end(), logits.begin(), logits.end());
    done += size;
  }
  model_->blocks().release(*blocks);
  model_->state_slots().release(slot);
  ASSERT_EQ(chunked.size(), whole.size());
  double max_diff = 0, max_logit = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(double{chunked[i]} - whole[i]));
    max_logit = std::max(max_logit, std::abs(double{whole[i]}));
  }
  // The same ops on the same rows: only the grouping of rows into matrix products differs.
  EXPECT_LE(max_diff / max_logit, 1e-5) << n << " tokens of " << vocab << " logits";
}

TEST_P(FixtureTest, GreedyContinuationsAreIdentical) {
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < n_prompts(); ++i) {
    SamplingParams params;
    params.max_tokens = static_cast<int64_t>(continuation(i).size());
    params.ignore_eos = true;
    requests.push_back({prompt(i), params});
  }
  // All prompts in one batch: each sequence's output must not depend on its batch mates.
  const std::vector<GenerationResult> results = generate(*model_, requests);
  for (size_t i = 0; i < n_prompts(); ++i)
    EXPECT_EQ(results[i].completions[0], continuation(i)) << "prompt " << i;
}

std::vector<FixtureCase> all_cases() {
  std::vector<FixtureCase> cases;
  for (const char* name :
       {"llama3", "llama-linear-rope", "qwen3-tied", "qwen3-gqa4", "llama3-hd64", "qwen3-hd128",
        "qwen3-moe", "mixtral", "glm4-moe", "gpt-oss", "qwen3-moe-hd64", "mixtral-hd64",
        "glm4-moe-hd64", "gpt-oss-hd64", "deepseek-v3", "deepseek-v3-dense", "moonlight"})
    for (const char* config : {"config.json", "config.original.json"})
      cases.push_back({name, config, std::string("tests/fixtures/") + name});
  // Their indexer scores tie exactly at the top-k boundary on 3-19 rows per prompt (ReLU zeroes
  // both indexer heads for many keys), where transformers' order comes from its CPU topk's
  // nth_element over the whole row, future keys included: hadron gives ties to the earlier
  // key, and the logits differ from those rows on (0.72-1.09 of max |logit|). With torch's
  // tie-break emulated, every prefill row matched within 1e-6 (2026-11-28). To be redrawn with
  // a margin check on the indexer scores, as routing has; skipped until then.
  for (const char* name : {"deepseek-v3.2", "glm-5"})
    for (const char* config : {"config.json", "config.original.json"})
      cases.push_back(
          {name, config, std::string("tests/fixtures/") + name,
           "fixture has exact indexer-score ties at the top-k boundary: to be redrawn"});
  for (const char* name : {"qwen3-next", "qwen3.5", "qwen3.5-moe"})  // gated DeltaNet hybrids
    for (const char* config : {"config.json", "config.original.json"})
      cases.push_back({name, config, std::string("tests/fixtures/") + name});
  cases.push_back({"default-model", "config.json", "models/default"});  // the shipped model
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Transformers, FixtureTest, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           std::string id = info.param.name + "_" + info.param.config_file;
                           for (char& c : id)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return id;
                         });

}  // namespace
}  // namespace hadron
