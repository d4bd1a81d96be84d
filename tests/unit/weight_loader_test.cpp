// The loader reports every declared tensor it did not find, every shape mismatch and every
// checkpoint tensor nobody used, naming them.
#include "models/weight_loader.h"

#include <gtest/gtest.h>

#include "../loader/test_files.h"
#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "loader/safetensors.h"
#include "models/registry.h"

namespace hadron {
namespace {

const std::string kFixture = std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/qwen3-tied";

std::string load_error(ModelConfig config, const std::string& dir = kFixture) {
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  const std::unique_ptr<Model> model = create_model(config, *backend);
  WeightPlan plan;
  model->declare_weights(plan);
  try {
    load_weights(plan, Checkpoint::open(dir), *backend);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(WeightLoader, LoadsAFixtureCompletely) {
  const ModelConfig config = load_model_config(kFixture);
  EXPECT_EQ(load_error(config), "");
}

TEST(WeightLoader, ReportsUnusedTensors) {
  ModelConfig config = load_model_config(kFixture);
  config.architecture = "LlamaForCausalLM";  // has no q/k norm weights
  const std::string error = load_error(config);
  EXPECT_NE(error.find("unused checkpoint tensor model.layers.0.self_attn.q_norm.weight"),
            std::string::npos)
      << error;
}

// A multi-token-prediction layer is stored as layer num_hidden_layers: skipped, not reported
// as unused. The deepseek-v3 fixture's last layer (an MoE one) stands in for it here.
TEST(WeightLoader, SkipsMultiTokenPredictionLayers) {
  const std::string deepseek = std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/deepseek-v3";
  ModelConfig config = load_model_config(deepseek);
  EXPECT_EQ(load_error(config, deepseek), "");
  config.n_layers -= 1;
  config.layer_types.pop_back();
  const std::string error = load_error(config, deepseek);
  EXPECT_NE(error.find("unused checkpoint tensor model.layers.2.input_layernorm.weight"),
            std::string::npos)
      << error;
  config.n_mtp_layers = 1;
  EXPECT_EQ(load_error(config, deepseek), "");
}

TEST(WeightLoader, ReportsShapeMismatchesWithFileAndShapes) {
  ModelConfig config = load_model_config(kFixture);
  config.intermediate_size += 8;
  const std::string error = load_error(config);
  EXPECT_NE(error.find("model.layers.1.mlp.gate_proj.weight in "), std::string::npos) << error;
  EXPECT_NE(error.find("expected shape [136, 64], found [128, 64]"), std::string::npos) << error;
}

TEST(WeightLoader, ReportsMissingTensors) {
  ModelConfig config = load_model_config(kFixture);
  config.n_layers += 1;
  config.layer_types.push_back(LayerKind::kFullAttention);  // one per layer, as parsed
  const std::string error = load_error(config);
  EXPECT_NE(error.find("missing tensor model.layers.2.self_attn.q_proj.weight"), std::string::npos)
      << error;
}

TEST(WeightLoader, RefusesWeightsLargerThanTheFreeMemoryBeforeLoading) {
  EXPECT_NO_THROW(check_weights_fit(1000, std::nullopt, "cpu"));
  EXPECT_NO_THROW(check_weights_fit(1000, 1000, "cuda"));
  try {
    check_weights_fit(93'410'000'000, 79'100'000'000, "cuda");  // Mixtral-8x7B, one H100
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("weights need 93.41 GB on cuda and 79.10 GB are free"),
              std::string::npos)
        << e.what();
  }
}

// A tensor stored [E, in, out] loads as [E, out, in]; 70 rows take two of the loader's tiles.
TEST(WeightLoader, TransposedWeightsLoadWithTheirLastTwoDimsSwapped) {
  constexpr int64_t kE = 3, kIn = 150, kOut = 70;
  std::vector<float> stored(kE * kIn * kOut);
  for (size_t i = 0; i < stored.size(); ++i) stored[i] = static_cast<float>(i % 9973) - 4000;
  const testing::ScratchDir dir;
  const std::string path = dir.write(
      "model.safetensors",
      testing::safetensors_bytes({{"w", "F32", {kE, kIn, kOut}, testing::bytes_of(stored)}}));
  WeightPlan plan;
  Tensor loaded;
  plan.add_transposed(&loaded, "w", {kE, kIn, kOut});
  EXPECT_EQ(plan.specs()[0].shape(), (std::vector<int64_t>{kE, kOut, kIn}));
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  const LoadedWeights weights = load_weights(plan, Checkpoint::open(path), *backend);
  ASSERT_EQ(loaded.ndim, 3);
  EXPECT_EQ(loaded.size(0), kE);
  EXPECT_EQ(loaded.size(1), kOut);
  EXPECT_EQ(loaded.size(2), kIn);
  std::vector<float> values(loaded.numel());
  convert_to_f32(loaded.data, loaded.dtype, values.data(), values.size());
  int64_t wrong = 0;
  for (int64_t e = 0; e < kE; ++e)
    for (int64_t o = 0; o < kOut; ++o)
      for (int64_t i = 0; i < kIn; ++i)
        wrong += values[(e * kOut + o) * kIn + i] != stored[(e * kIn + i) * kOut + o];
  EXPECT_EQ(wrong, 0);
}

// The unit follows the total, so a fixture's few megabytes do not read "0.0 of 0.0 GB".
// A rank loads only its slice: rows (column-parallel) or columns (row-parallel) of the whole
// tensor, and merged sources each sliced before they are concatenated.
TEST(WeightLoader, ShardSlicesAreThePartsOfTheWholeTensor) {
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  const Checkpoint checkpoint = Checkpoint::open(kFixture);
  const std::string gate = "model.layers.0.mlp.gate_proj.weight";  // [128, 64]
  const std::string up = "model.layers.0.mlp.up_proj.weight";
  WeightPlan plan;
  Tensor whole_gate, whole_up, columns, rows, merged;
  plan.add(&whole_gate, gate, {128, 64});
  plan.add(&whole_up, up, {128, 64});
  plan.add(&columns, gate, {128, 64}, {-1, 4, 2});  // columns [32, 48)
  plan.add(&rows, gate, {128, 64}, {0, 2, 1});      // rows [64, 128)
  plan.add_merged(&merged, {{gate, {128, 64}, {0, 4, 3}}, {up, {128, 64}, {0, 4, 3}}});
  plan.allow_unused("");
  const LoadedWeights loaded = load_weights(plan, checkpoint, *backend);
  ASSERT_EQ(columns.size(0), 128);
  ASSERT_EQ(columns.size(1), 16);
  ASSERT_EQ(rows.size(0), 64);
  ASSERT_EQ(merged.size(0), 64);
  const auto at = [](const Tensor& t, int64_t r, int64_t c) {
    return load_f32(t, r * t.size(1) + c);
  };
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t c = 0; c < 16; ++c) ASSERT_EQ(at(columns, r, c), at(whole_gate, r, 32 + c));
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 64; ++c) ASSERT_EQ(at(rows, r, c), at(whole_gate, 64 + r, c));
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 64; ++c) {
      ASSERT_EQ(at(merged, r, c), at(whole_gate, 96 + r, c));
      ASSERT_EQ(at(merged, 32 + r, c), at(whole_up, 96 + r, c));
    }
}

TEST(WeightPlan, SlicesSplitOrReplicateHeads) {
  // 2 KV heads on 4 ranks: ranks 0-1 hold head 0, ranks 2-3 head 1.
  for (int rank = 0; rank < 4; ++rank) {
    const ShardSlice kv = WeightPlan(rank, 4).slice(Shard::kColumn, 2, "kv heads", true);
    EXPECT_EQ(kv.n_parts, 2);
    EXPECT_EQ(kv.part, rank / 2);
    const ShardSlice q = WeightPlan(rank, 4).slice(Shard::kRow, 8, "heads");
    EXPECT_EQ(q.dim, -1);
    EXPECT_EQ(q.n_parts, 4);
    EXPECT_EQ(q.part, rank);
  }
  EXPECT_EQ(WeightPlan(0, 1).slice(Shard::kColumn, 3, "heads").n_parts, 1);
  EXPECT_THROW(WeightPlan(0, 4).slice(Shard::kColumn, 2, "heads"), InputError);
  EXPECT_THROW(WeightPlan(0, 4).slice(Shard::kColumn, 6, "kv heads", true), InputError);
}

TEST(WeightLoader, ProgressAmountUsesAUnitThatFitsTheTotal) {
  EXPECT_EQ(load_progress_amount(300'000'000, 1'200'000'000, 0.5), "0.3 of 1.2 GB, 0.6 GB/s");
  EXPECT_EQ(load_progress_amount(1'300'000, 5'000'000, 0.25), "1.3 of 5.0 MB, 5.2 MB/s");
  EXPECT_EQ(load_progress_amount(4'096, 16'384, 0), "4.1 of 16.4 kB, 0.0 kB/s");
  EXPECT_EQ(load_progress_amount(1'000'000'000, 1'000'000'000, 2), "1.0 of 1.0 GB, 0.5 GB/s");
}

TEST(WeightLoader, DummyWeightsAreSeededAndNotZero) {
  const ModelConfig config = load_model_config(kFixture);
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  const std::unique_ptr<Model> model = create_model(config, *backend);
  WeightPlan plan;
  model->declare_weights(plan);
  LoadedWeights a = load_dummy_weights(plan, *backend, DType::BF16, 1);
  const Tensor first = *plan.specs()[0].target;
  std::vector<uint16_t> values(first.ptr<uint16_t>(), first.ptr<uint16_t>() + first.numel());
  LoadedWeights b = load_dummy_weights(plan, *backend, DType::BF16, 1);
  const Tensor again = *plan.specs()[0].target;
  EXPECT_TRUE(std::equal(values.begin(), values.end(), again.ptr<uint16_t>()));
  int zeros = 0;
  for (uint16_t v : values) zeros += v == 0;
  EXPECT_LT(zeros, static_cast<int>(values.size() / 100));
}

}  // namespace
}  // namespace hadron
