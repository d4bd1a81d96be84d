// gpt-oss unquantized, as transformers and fine-tuning tools save it: the gpt-oss fixture's MXFP4
// experts decoded and written in transformers' fused (in, out) layout, without
// quantization_config, load and score like transformers (the values are the same: MXFP4 codes
// times power-of-two scales are exact in bf16).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../loader/test_files.h"
#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "fixture_util.h"
#include "loader/safetensors.h"
#include "ops/moe.h"

namespace hadron {
namespace {

constexpr double kTolerance = 1e-3;  // as the fixture test's

// The fixture's tensors with every <name>_blocks / <name>_scales pair replaced by <name>, bf16
// [E, in, out].
std::vector<testing::TensorBytes> unquantized_tensors(const std::string& fixture) {
  const Checkpoint checkpoint = Checkpoint::open(fixture);
  std::vector<testing::TensorBytes> out;
  for (const std::string& name : checkpoint.names()) {
    const TensorInfo& info = *checkpoint.find(name);
    if (name.ends_with("_scales")) continue;
    std::vector<float> values(info.numel());
    if (!name.ends_with("_blocks")) {
      convert_to_f32(info.data, info.dtype, values.data(), values.size());
      out.push_back({name, "F32", info.shape, testing::bytes_of(values)});
      continue;
    }
    const std::string base = name.substr(0, name.size() - std::string("_blocks").size());
    const TensorInfo& scales = *checkpoint.find(base + "_scales");
    const int64_t experts = info.shape[0], rows = info.shape[1], cols = info.shape[2] * 32;
    std::vector<float> decoded(experts * rows * cols);
    decode_mxfp4_rows(static_cast<const uint8_t*>(info.data),
                      static_cast<const uint8_t*>(scales.data), experts * rows, cols,
                      decoded.data());
    std::vector<float> transposed(decoded.size());
    for (int64_t e = 0; e < experts; ++e)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          transposed[(e * cols + c) * rows + r] = decoded[(e * rows + r) * cols + c];
    std::vector<uint16_t> bf16(transposed.size());
    convert_from_f32(transposed.data(), bf16.data(), DType::BF16, bf16.size());
    out.push_back({base, "BF16", {experts, cols, rows}, testing::bytes_of(bf16)});
  }
  return out;
}

TEST(GptOssUnquantized, TransposedBf16ExpertsScoreLikeTransformers) {
  const std::string fixture = testing::fixture_dir("gpt-oss");
  const testing::ScratchDir dir;
  nlohmann::json config = nlohmann::json::parse(std::ifstream(fixture + "/config.json"));
  ASSERT_TRUE(config.contains("quantization_config"));
  config.erase("quantization_config");
  dir.write("config.json", config.dump());
  const std::vector<testing::TensorBytes> tensors = unquantized_tensors(fixture);
  ASSERT_TRUE(std::ranges::any_of(
      tensors, [](const auto& t) { return t.name.ends_with("mlp.experts.gate_up_proj"); }));
  dir.write("model.safetensors", testing::safetensors_bytes(tensors));

  EngineOptions options;
  options.model_path = dir.path();
  options.max_model_len = 128;
  options.max_num_seqs = 4;
  options.max_num_batched_tokens = 64;
  options.verbose = false;
  const auto model = LoadedModel::load(options, make_cpu_backend());
  const testing::Fixture reference = testing::read_fixture("gpt-oss");
  for (size_t i = 0; i < reference.prompts.size(); ++i) {
    const std::vector<int32_t> tokens = reference.sequence(i);
    const std::vector<float> ours = score(*model, tokens);
    const double error =
        testing::relative_error(ours.data(), reference.logits[i], 0, reference.logits[i].shape[0]);
    EXPECT_LE(error, kTolerance) << "prompt " << i;
    std::printf("prompt %zu max|diff|/max|logit| = %.2e\n", i, error);
  }
}

}  // namespace
}  // namespace hadron
