// Bad config.json input is an InputError naming the file and the key, never a crash.
#include <gtest/gtest.h>

#include "loader/hf_config.h"
#include "test_files.h"

namespace hadron {
namespace {

nlohmann::json base_config() {
  return {{"architectures", {"Qwen3ForCausalLM"}},
          {"vocab_size", 1000},
          {"hidden_size", 64},
          {"intermediate_size", 128},
          {"num_hidden_layers", 4},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2}};
}

// parse_model_config(config) must fail naming "cfg.json" and each of `parts`.
void expect_rejected(const nlohmann::json& config, const std::vector<std::string>& parts) {
  const std::string message =
      testing::input_error_of([&] { parse_model_config(config, "cfg.json"); });
  ASSERT_FALSE(message.empty()) << "accepted: " << config.dump();
  EXPECT_NE(message.find("cfg.json"), std::string::npos) << message;
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

nlohmann::json with(const std::string& key, const nlohmann::json& value) {
  nlohmann::json config = base_config();
  config[key] = value;
  return config;
}

nlohmann::json without(const std::string& key) {
  nlohmann::json config = base_config();
  config.erase(key);
  return config;
}

TEST(HfConfigErrors, BaseConfigIsValid) {
  EXPECT_EQ(parse_model_config(base_config(), "cfg.json").head_dim, 16);
}

TEST(HfConfigErrors, MissingRequiredKeys) {
  for (const char* key :
       {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "architectures"})
    expect_rejected(without(key), {key});
  expect_rejected(without("intermediate_size"), {"intermediate_size", "dense"});
}

TEST(HfConfigErrors, WrongTypes) {
  expect_rejected(with("hidden_size", "4096"), {"'hidden_size'", "integer"});
  expect_rejected(with("hidden_size", 64.5), {"'hidden_size'", "integer"});
  expect_rejected(with("tie_word_embeddings", 1), {"'tie_word_embeddings'", "true or false"});
  expect_rejected(with("rms_norm_eps", "small"), {"'rms_norm_eps'", "number"});
  expect_rejected(with("eos_token_id", {1, "two"}), {"'eos_token_id'"});
  expect_rejected(with("rope_scaling", 8), {"'rope_scaling'", "object"});
  expect_rejected(with("layer_types", "full_attention"), {"'layer_types'", "list"});
  expect_rejected(with("architectures", {7}), {"'architectures'"});
  expect_rejected(with("text_config", {1, 2}), {"'text_config'", "object"});
  expect_rejected(
      with("quantization_config", {{"quant_method", "fp8"}, {"weight_block_size", "128"}}),
      {"'quantization_config.weight_block_size'"});
  expect_rejected(nlohmann::json::array({1, 2}), {"JSON object"});
}

TEST(HfConfigErrors, ImpossibleValues) {
  expect_rejected(with("num_attention_heads", 0), {"'num_attention_heads'", "positive"});
  expect_rejected(with("num_key_value_heads", 3), {"'num_key_value_heads'", "divide"});
  expect_rejected(with("hidden_size", -64), {"'hidden_size'", "negative"});
  expect_rejected(with("num_hidden_layers", 1 << 30), {"'num_hidden_layers'", "too large"});
  expect_rejected(with("hidden_size", 18446744073709551615ull), {"'hidden_size'", "too large"});
  expect_rejected(with("head_dim", 0), {"'head_dim'", "positive"});
  expect_rejected(with("layer_types",
                       {"full_attention", "sliding_attention", "full_attention", "full_attention"}),
                  {"'sliding_window'", "positive"});
}

TEST(HfConfigErrors, LayerTypes) {
  expect_rejected(with("layer_types", {"full_attention"}), {"'layer_types'", "1 entries for 4"});
  expect_rejected(
      with("layer_types", {"full_attention", "full_attention", "mamba", "full_attention"}),
      {"'layer_types'", "'mamba'"});
  expect_rejected(with("full_attention_interval", 2), {"linear_num_value_heads"});
}

TEST(HfConfigErrors, Rope) {
  expect_rejected(with("rope_scaling", {{"rope_type", "magic"}, {"factor", 2.0}}),
                  {"'rope_scaling.rope_type'", "'magic'"});
  expect_rejected(with("rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}}),
                  {"original_max_position_embeddings", "llama3"});
  expect_rejected(with("rope_parameters", {{"rope_type", "linear"}, {"factor", 0}}),
                  {"'rope_parameters.factor'", "positive"});
  expect_rejected(with("rope_theta", -1), {"rope_theta", "positive"});
  expect_rejected(with("partial_rotary_factor", 1.5), {"partial_rotary_factor"});
}

TEST(HfConfigErrors, MoeAndMla) {
  nlohmann::json moe = with("num_experts", 8);
  expect_rejected(moe, {"'num_experts_per_tok'"});
  moe["num_experts_per_tok"] = 2;
  moe["n_group"] = 3;
  expect_rejected(moe, {"'n_group'"});
  moe["n_group"] = 2;
  moe["topk_group"] = 3;
  expect_rejected(moe, {"'topk_group'"});
  moe["topk_group"] = 1;
  moe["mlp_only_layers"] = {9};
  expect_rejected(moe, {"'mlp_only_layers'"});
  moe["mlp_only_layers"] = {1};
  moe["scoring_func"] = "tanh";
  expect_rejected(moe, {"'scoring_func'", "tanh"});
  expect_rejected(with("kv_lora_rank", 512), {"'qk_rope_head_dim'", "MLA"});
}

TEST(HfConfigErrors, FilesOnDisk) {
  testing::ScratchDir dir;
  EXPECT_NE(
      testing::input_error_of([&] { load_model_config(dir.path().string()); }).find("config.json"),
      std::string::npos);
  const std::string broken = dir.write("broken.json", "{\"hidden_size\": 12,");
  EXPECT_NE(testing::input_error_of([&] { load_model_config(broken); }).find(broken),
            std::string::npos);
  const std::string duplicated = dir.write("dup.json", R"({"hidden_size": 1, "hidden_size": 2})");
  EXPECT_NE(testing::input_error_of([&] { load_model_config(duplicated); }).find("twice"),
            std::string::npos);
  const std::string good = dir.write("config.json", base_config().dump());
  EXPECT_EQ(load_model_config(dir.path().string()).source, good);
}

}  // namespace
}  // namespace hadron
