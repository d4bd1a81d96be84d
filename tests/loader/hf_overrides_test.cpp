// --hf-overrides (vLLM's): a JSON object merged into config.json before it is parsed.
#include <gtest/gtest.h>

#include "loader/hf_config.h"
#include "test_files.h"

namespace hadron {
namespace {

using nlohmann::json;

const std::string kConfigs = std::string(HADRON_TEST_DATA_DIR) + "/configs/";

TEST(HfOverrides, FewerLayersOfARealConfig) {
  const ModelConfig full = load_model_config(kConfigs + "deepseek-ai__DeepSeek-V3");
  const ModelConfig reduced = load_model_config(kConfigs + "deepseek-ai__DeepSeek-V3",
                                                parse_hf_overrides(R"({"num_hidden_layers": 2})"));
  EXPECT_EQ(full.n_layers, 61);
  EXPECT_EQ(reduced.n_layers, 2);
  EXPECT_EQ(reduced.layer_types.size(), 2u);
  EXPECT_EQ(reduced.hidden_size, full.hidden_size);
  EXPECT_EQ(reduced.moe.n_experts, full.moe.n_experts);
  EXPECT_EQ(reduced.moe.first_k_dense_replace, 3);  // both layers dense, as transformers has it
}

TEST(HfOverrides, ObjectsMergeRecursivelyAndUnknownKeysStay) {
  json config = {{"num_hidden_layers", 4},
                 {"rope_scaling", {{"type", "yarn"}, {"factor", 40}}},
                 {"list", {1, 2}}};
  apply_hf_overrides(config, {{"rope_scaling", {{"factor", 8}}},
                              {"list", {3}},
                              {"my_extra_key", {{"a", 1}}},
                              {"num_hidden_layers", 2}});
  EXPECT_EQ(config.at("rope_scaling"), json({{"type", "yarn"}, {"factor", 8}}));
  EXPECT_EQ(config.at("list"), json({3}));  // arrays are replaced, not merged
  EXPECT_EQ(config.at("my_extra_key"), json({{"a", 1}}));
  EXPECT_EQ(config.at("num_hidden_layers"), 2);
}

// A key that only text_config has goes there; a key of the top level stays at the top level.
TEST(HfOverrides, NestedTextConfig) {
  json config = {{"architectures", {"X"}},
                 {"tie_word_embeddings", false},
                 {"text_config", {{"num_hidden_layers", 64}, {"tie_word_embeddings", true}}}};
  apply_hf_overrides(config, {{"num_hidden_layers", 2},
                              {"tie_word_embeddings", true},
                              {"text_config", {{"hidden_size", 8}}}});
  EXPECT_EQ(config.at("text_config"),
            json({{"num_hidden_layers", 2}, {"tie_word_embeddings", true}, {"hidden_size", 8}}));
  EXPECT_EQ(config.at("tie_word_embeddings"), true);
  EXPECT_FALSE(config.contains("num_hidden_layers"));

  const ModelConfig reduced = load_model_config(kConfigs + "Qwen__Qwen3.5-27B",
                                                parse_hf_overrides(R"({"num_hidden_layers": 4,
                             "layer_types": ["linear_attention", "linear_attention",
                                             "linear_attention", "full_attention"]})"));
  EXPECT_EQ(reduced.n_layers, 4);
  EXPECT_EQ(reduced.raw.at("num_hidden_layers"), 4);
}

TEST(HfOverrides, ClearErrors) {
  EXPECT_TRUE(parse_hf_overrides("").is_null());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{num_hidden_layers: 2}", "--hf-overrides: not valid JSON"},
      {"[1, 2]", "must be a JSON object"},
      {"2", "got number"},
      {R"({"a": 1, "a": 2})", "appears twice"},
  };
  for (const auto& [text, want] : cases) {
    const std::string error = testing::input_error_of([&] { parse_hf_overrides(text); });
    EXPECT_NE(error.find(want), std::string::npos) << text << " -> " << error;
  }
  // A value of the wrong type is the parser's usual error, naming the key and the overrides.
  const std::string error = testing::input_error_of([&] {
    load_model_config(kConfigs + "deepseek-ai__DeepSeek-V3",
                      parse_hf_overrides(R"({"num_hidden_layers": "two"})"));
  });
  EXPECT_NE(error.find("num_hidden_layers"), std::string::npos) << error;
  EXPECT_NE(error.find("with --hf-overrides"), std::string::npos) << error;
}

}  // namespace
}  // namespace hadron
