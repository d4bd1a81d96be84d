// Every shared config.json parses, with spot checks of real values per architecture, and the
// transformers-4 and -5 spellings of the same config normalise to the same ModelConfig.
#include "loader/hf_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"

namespace hadron {
namespace {

const std::string kConfigs = std::string(HADRON_TEST_DATA_DIR) + "/configs/";

ModelConfig load(const std::string& model) { return load_model_config(kConfigs + model); }

nlohmann::json read_json(const std::string& model) {
  std::ifstream in(kConfigs + model + "/config.json");
  return nlohmann::json::parse(in);
}

int64_t count(const std::vector<LayerKind>& kinds, LayerKind kind) {
  return std::count(kinds.begin(), kinds.end(), kind);
}

TEST(HfConfig, EverySharedConfigParses) {
  std::set<std::string> architectures;
  int n_configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kConfigs)) {
    if (!std::filesystem::exists(entry.path() / "config.json")) continue;
    SCOPED_TRACE(entry.path().string());
    const ModelConfig config = load_model_config(entry.path().string());
    ++n_configs;
    architectures.insert(config.architecture);
    EXPECT_EQ(static_cast<int64_t>(config.layer_types.size()), config.n_layers);
    EXPECT_GT(config.head_dim, 0);
    EXPECT_EQ(config.n_heads % config.n_kv_heads, 0);
    EXPECT_FALSE(config.eos_token_ids.empty());
    EXPECT_FALSE(describe(config).empty());
  }
  EXPECT_GE(n_configs, 24);
  EXPECT_EQ(architectures,
            (std::set<std::string>{
                "LlamaForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "MixtralForCausalLM",
                "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "Glm4MoeForCausalLM",
                "GlmMoeDsaForCausalLM", "GptOssForCausalLM", "Qwen3NextForCausalLM",
                "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}));
}

TEST(HfConfig, Qwen3DenseTiedAndUntied) {
  const ModelConfig q8 = load("Qwen__Qwen3-8B");
  EXPECT_EQ(q8.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(q8.n_layers, 36);
  EXPECT_EQ(q8.n_heads, 32);
  EXPECT_EQ(q8.n_kv_heads, 8);
  EXPECT_EQ(q8.head_dim, 128);
  EXPECT_EQ(q8.vocab_size, 151936);
  EXPECT_FALSE(q8.tie_word_embeddings);
  EXPECT_EQ(q8.rope.type, "default");
  EXPECT_EQ(q8.rope.theta, 1e6);
  EXPECT_EQ(q8.sliding_window, 0);
  EXPECT_EQ(count(q8.layer_types, LayerKind::kFullAttention), 36);
  EXPECT_EQ(q8.dtype, DType::BF16);
  EXPECT_EQ(q8.eos_token_ids, std::vector<int64_t>{151645});
  EXPECT_FALSE(q8.is_moe());
  const ModelConfig q06 = load("Qwen__Qwen3-0.6B");
  EXPECT_TRUE(q06.tie_word_embeddings);
  EXPECT_EQ(q06.head_dim, 128);  // decoupled: hidden 1024 / 16 heads would be 64
}

TEST(HfConfig, LlamaDefaultsAndLlama3Rope) {
  const ModelConfig llama = load("meta-llama__Llama-3.1-8B-Instruct");
  EXPECT_EQ(llama.head_dim, 128);  // absent: 4096 / 32
  EXPECT_EQ(llama.rope.type, "llama3");
  EXPECT_EQ(llama.rope.factor, 8.0);
  EXPECT_EQ(llama.rope.low_freq_factor, 1.0);
  EXPECT_EQ(llama.rope.high_freq_factor, 4.0);
  EXPECT_EQ(llama.rope.original_max_position_embeddings, 8192);
  EXPECT_EQ(llama.rope.theta, 500000.0);
  EXPECT_EQ(llama.rms_norm_eps, 1e-5);
  EXPECT_EQ(llama.eos_token_ids, (std::vector<int64_t>{128001, 128008, 128009}));
  EXPECT_EQ(llama.bos_token_ids, std::vector<int64_t>{128000});
  const ModelConfig small = load("meta-llama__Llama-3.2-1B");
  EXPECT_TRUE(small.tie_word_embeddings);
  EXPECT_EQ(small.head_dim, 64);
  EXPECT_EQ(small.rope.factor, 32.0);
}

TEST(HfConfig, Qwen35NestedTextConfig) {
  const ModelConfig dense = load("Qwen__Qwen3.5-27B");
  EXPECT_EQ(dense.architecture, "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(dense.model_type, "qwen3_5");
  EXPECT_EQ(dense.hidden_size, 5120);
  EXPECT_EQ(dense.n_layers, 64);
  EXPECT_EQ(dense.n_heads, 24);
  EXPECT_EQ(dense.n_kv_heads, 4);
  EXPECT_EQ(dense.head_dim, 256);
  EXPECT_EQ(dense.vocab_size, 248320);
  EXPECT_EQ(dense.intermediate_size, 17408);
  EXPECT_FALSE(dense.tie_word_embeddings);  // top level, not in text_config
  EXPECT_EQ(dense.layer_types[2], LayerKind::kLinearAttention);
  EXPECT_EQ(dense.layer_types[3], LayerKind::kFullAttention);
  EXPECT_EQ(count(dense.layer_types, LayerKind::kFullAttention), 16);
  EXPECT_EQ(dense.linear_attention.n_value_heads, 48);
  EXPECT_EQ(dense.linear_attention.conv_kernel_dim, 4);
  EXPECT_EQ(dense.rope.theta, 1e7);
  EXPECT_EQ(dense.rope.partial_rotary_factor, 0.25);
  EXPECT_EQ(dense.rope.mrope_section, (std::vector<int64_t>{11, 11, 10}));
  EXPECT_TRUE(dense.rope.mrope_interleaved);
  EXPECT_EQ(dense.n_mtp_layers, 1);
  EXPECT_EQ(dense.eos_token_ids, std::vector<int64_t>{248044});
  EXPECT_TRUE(dense.raw.contains("attn_output_gate"));  // the text config
  EXPECT_TRUE(dense.attn_output_gate);
  EXPECT_EQ(dense.linear_attention.state_dtype, DType::F32);  // mamba_ssm_dtype
  EXPECT_EQ(dense.linear_attention.n_key_heads, 16);
  EXPECT_EQ(dense.linear_attention.key_head_dim, 128);
  EXPECT_EQ(dense.linear_attention.value_head_dim, 128);
  EXPECT_EQ(dense.linear_attention.full_attention_interval, 4);
  EXPECT_FALSE(dense.raw.contains("vision_config"));
  const ModelConfig moe = load("Qwen__Qwen3.5-35B-A3B");
  EXPECT_EQ(moe.moe.n_experts, 256);
  EXPECT_EQ(moe.moe.n_experts_per_token, 8);
  EXPECT_EQ(moe.moe.expert_intermediate_size, 512);
  EXPECT_EQ(moe.moe.n_shared_experts, 1);
  EXPECT_EQ(moe.moe.shared_expert_intermediate_size, 512);
  EXPECT_EQ(moe.intermediate_size, 0);
}

TEST(HfConfig, DeepSeekV3MlaYarnFp8) {
  const ModelConfig ds = load("deepseek-ai__DeepSeek-V3");
  EXPECT_TRUE(ds.is_mla());
  EXPECT_EQ(ds.mla.q_lora_rank, 1536);
  EXPECT_EQ(ds.mla.kv_lora_rank, 512);
  EXPECT_EQ(ds.mla.qk_nope_head_dim, 128);
  EXPECT_EQ(ds.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(ds.mla.v_head_dim, 128);
  EXPECT_EQ(ds.mla.qk_head_dim, 192);
  EXPECT_EQ(ds.head_dim, 64);  // the rotated part, as transformers' DeepseekV3Config
  EXPECT_EQ(ds.rope.type, "yarn");
  EXPECT_EQ(ds.rope.factor, 40.0);
  EXPECT_EQ(ds.rope.original_max_position_embeddings, 4096);
  EXPECT_EQ(ds.rope.mscale_all_dim, 1.0);
  EXPECT_EQ(ds.quant.method, "fp8");
  EXPECT_EQ(ds.quant.fmt, "e4m3");
  EXPECT_EQ(ds.quant.weight_block_size, (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(ds.moe.n_experts, 256);
  EXPECT_EQ(ds.moe.n_shared_experts, 1);
  EXPECT_EQ(ds.moe.shared_expert_intermediate_size, 2048);
  EXPECT_EQ(ds.moe.scoring_func, "sigmoid");
  EXPECT_EQ(ds.moe.topk_method, "noaux_tc");
  EXPECT_EQ(ds.moe.n_group, 8);
  EXPECT_EQ(ds.moe.topk_group, 4);
  EXPECT_EQ(ds.moe.routed_scaling_factor, 2.5);
  EXPECT_EQ(ds.moe.first_k_dense_replace, 3);
  EXPECT_EQ(ds.n_mtp_layers, 1);
  EXPECT_EQ(ds.quant.activation_scheme, "dynamic");
  EXPECT_NE(describe(ds).find("fp8 e4m3, block [128, 128], dynamic activation scales"),
            std::string::npos)
      << describe(ds);
  const ModelConfig v32 = load("deepseek-ai__DeepSeek-V3.2");
  EXPECT_EQ(v32.mla.index_n_heads, 64);
  EXPECT_EQ(v32.mla.index_head_dim, 128);
  EXPECT_EQ(v32.mla.index_topk, 2048);
  EXPECT_EQ(v32.quant.scale_fmt, "ue8m0");
}

TEST(HfConfig, DeepSeekFamilyRopeInterleaveAndGroups) {
  // transformers' DeepseekV3Config defaults rope_interleave to true; none of these sets it.
  for (const char* name :
       {"deepseek-ai__DeepSeek-V3", "deepseek-ai__DeepSeek-R1", "moonshotai__Kimi-K2-Instruct",
        "moonshotai__Moonlight-16B-A3B-Instruct"}) {
    const ModelConfig config = load(name);
    EXPECT_EQ(config.architecture, "DeepseekV3ForCausalLM") << name;
    EXPECT_TRUE(config.rope.interleaved) << name;
    EXPECT_EQ(config.mla.kv_lora_rank, 512) << name;
    EXPECT_EQ(config.mla.qk_rope_head_dim, 64) << name;
  }
  const ModelConfig kimi = load("moonshotai__Kimi-K2-Instruct");
  EXPECT_EQ(kimi.model_type, "kimi_k2");
  EXPECT_EQ(kimi.moe.n_experts, 384);
  EXPECT_EQ(kimi.moe.n_group, 1);
  EXPECT_EQ(kimi.mla.q_lora_rank, 1536);
  const ModelConfig moonlight = load("moonshotai__Moonlight-16B-A3B-Instruct");
  EXPECT_EQ(moonlight.mla.q_lora_rank, 0);  // "q_lora_rank": null: a plain q_proj
  EXPECT_EQ(moonlight.moe.n_shared_experts, 2);
  EXPECT_EQ(moonlight.moe.first_k_dense_replace, 1);
  // An explicit false stays false, and other families keep rotating halves.
  nlohmann::json explicit_false = {{"architectures", {"DeepseekV3ForCausalLM"}},
                                   {"model_type", "deepseek_v3"},
                                   {"vocab_size", 8},
                                   {"hidden_size", 8},
                                   {"intermediate_size", 8},
                                   {"num_hidden_layers", 1},
                                   {"num_attention_heads", 1},
                                   {"rope_interleave", false}};
  EXPECT_FALSE(parse_model_config(explicit_false, "x").rope.interleaved);
  EXPECT_FALSE(load("zai-org__GLM-4.5").rope.interleaved);
}

TEST(HfConfig, GlmPartialRotaryAndDsa) {
  const ModelConfig glm = load("zai-org__GLM-4.5");
  EXPECT_EQ(glm.rope.partial_rotary_factor, 0.5);
  EXPECT_EQ(glm.head_dim, 128);
  EXPECT_TRUE(glm.attention_bias);
  EXPECT_EQ(glm.moe.n_experts, 160);
  EXPECT_EQ(glm.eos_token_ids.size(), 3u);
  const ModelConfig glm5 = load("zai-org__GLM-5-FP8");
  EXPECT_EQ(glm5.architecture, "GlmMoeDsaForCausalLM");
  EXPECT_EQ(glm5.rope.theta, 1e6);  // from rope_parameters
  EXPECT_TRUE(glm5.rope.interleaved);
  EXPECT_EQ(glm5.mla.qk_head_dim, 256);
  EXPECT_EQ(glm5.mla.index_n_heads, 32);
  EXPECT_EQ(glm5.head_dim, 64);
  EXPECT_EQ(glm5.quant.modules_to_not_convert.size(), 712u);
}

TEST(HfConfig, SparseAttentionIndexer) {
  const ModelConfig v32 = load("deepseek-ai__DeepSeek-V3.2");
  EXPECT_EQ(v32.architecture, "DeepseekV32ForCausalLM");
  EXPECT_TRUE(v32.is_sparse_attention());
  EXPECT_FALSE(v32.mla.index_rope_interleaved);  // transformers' default: rotate halves
  EXPECT_TRUE(v32.rope.interleaved);
  for (const char* name : {"zai-org__GLM-5", "zai-org__GLM-5-FP8"}) {
    const ModelConfig glm5 = load(name);
    EXPECT_TRUE(glm5.is_sparse_attention()) << name;
    EXPECT_TRUE(glm5.mla.index_rope_interleaved) << name;
    EXPECT_EQ(glm5.mla.index_head_dim, 128) << name;
    EXPECT_EQ(glm5.mla.index_topk, 2048) << name;
    EXPECT_EQ(glm5.mla.qk_nope_head_dim, 192) << name;
    EXPECT_EQ(glm5.mla.v_head_dim, 256) << name;
  }
  EXPECT_FALSE(load("deepseek-ai__DeepSeek-V3").is_sparse_attention());
  nlohmann::json sparse = {{"architectures", {"GlmMoeDsaForCausalLM"}},
                           {"model_type", "glm_moe_dsa"},
                           {"vocab_size", 8},
                           {"hidden_size", 8},
                           {"intermediate_size", 8},
                           {"num_hidden_layers", 2},
                           {"num_attention_heads", 1},
                           {"kv_lora_rank", 4},
                           {"q_lora_rank", 4},
                           {"qk_nope_head_dim", 4},
                           {"qk_rope_head_dim", 2},
                           {"v_head_dim", 4},
                           {"index_n_heads", 1},
                           {"index_head_dim", 4},
                           {"index_topk", 2},
                           {"indexer_types", {"full", "full"}}};
  EXPECT_TRUE(parse_model_config(sparse, "x").is_sparse_attention());
  nlohmann::json shared = sparse;
  shared["indexer_types"] = {"full", "shared"};
  EXPECT_THROW(parse_model_config(shared, "x"), InputError);
  nlohmann::json narrow = sparse;
  narrow["index_head_dim"] = 1;  // below the rope part
  EXPECT_THROW(parse_model_config(narrow, "x"), InputError);
  nlohmann::json no_lora = sparse;
  no_lora.erase("q_lora_rank");
  EXPECT_THROW(parse_model_config(no_lora, "x"), InputError);
}

TEST(HfConfig, GptOssSlidingLayersAndMxfp4) {
  const ModelConfig oss = load("openai__gpt-oss-20b");
  ASSERT_EQ(oss.layer_types.size(), 24u);
  for (size_t i = 0; i < oss.layer_types.size(); ++i)
    EXPECT_EQ(oss.layer_types[i],
              i % 2 == 0 ? LayerKind::kSlidingAttention : LayerKind::kFullAttention);
  EXPECT_EQ(oss.sliding_window, 128);
  EXPECT_EQ(oss.moe.n_experts, 32);
  EXPECT_EQ(oss.moe.n_experts_per_token, 4);
  EXPECT_EQ(oss.moe.expert_intermediate_size, 2880);
  EXPECT_EQ(oss.quant.method, "mxfp4");
  EXPECT_EQ(oss.quant.modules_to_not_convert.size(), 4u);
  EXPECT_EQ(oss.rope.type, "yarn");
  EXPECT_FALSE(oss.rope.truncate);
  EXPECT_EQ(oss.rope.theta, 150000.0);
  EXPECT_EQ(load("openai__gpt-oss-120b").moe.n_experts, 128);
  const std::string text = describe(oss);
  EXPECT_NE(text.find("sliding x12, full x12"), std::string::npos) << text;
  EXPECT_NE(text.find("quantization: mxfp4, 4 modules not converted"), std::string::npos) << text;
}

TEST(HfConfig, Qwen3NextDerivesLinearLayers) {
  const ModelConfig next = load("Qwen__Qwen3-Next-80B-A3B-Thinking");
  ASSERT_EQ(next.layer_types.size(), 48u);
  EXPECT_EQ(next.layer_types[0], LayerKind::kLinearAttention);
  EXPECT_EQ(next.layer_types[3], LayerKind::kFullAttention);
  EXPECT_EQ(count(next.layer_types, LayerKind::kLinearAttention), 36);
  EXPECT_EQ(next.rope.partial_rotary_factor, 0.25);
  EXPECT_EQ(next.moe.n_experts, 512);
  EXPECT_EQ(next.moe.n_experts_per_token, 10);
  EXPECT_EQ(next.moe.n_shared_experts, 1);
  EXPECT_EQ(next.linear_attention.n_key_heads, 16);
  EXPECT_EQ(next.linear_attention.n_value_heads, 32);
  EXPECT_FALSE(next.attn_output_gate);  // not in the config: Qwen3-Next gates anyway
  EXPECT_EQ(next.moe.shared_expert_intermediate_size, 512);
  EXPECT_EQ(next.moe.decoder_sparse_step, 1);
  EXPECT_TRUE(next.moe.mlp_only_layers.empty());
}

TEST(HfConfig, MixtralAndQwenMoe) {
  const ModelConfig mixtral = load("mistralai__Mixtral-8x7B-v0.1");
  EXPECT_EQ(mixtral.moe.n_experts, 8);
  EXPECT_EQ(mixtral.moe.n_experts_per_token, 2);
  EXPECT_EQ(mixtral.moe.expert_intermediate_size, 14336);
  EXPECT_EQ(mixtral.sliding_window, 0);
  const ModelConfig fp8 = load("Qwen__Qwen3-30B-A3B-FP8");
  EXPECT_EQ(fp8.moe.n_experts, 128);
  EXPECT_EQ(fp8.moe.expert_intermediate_size, 768);
  EXPECT_TRUE(fp8.moe.norm_topk_prob);
  EXPECT_EQ(fp8.quant.weight_block_size, (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(fp8.quant.modules_to_not_convert.size(), 145u);
}

TEST(HfConfig, RopeParametersEqualRopeScaling) {
  nlohmann::json v4 = read_json("meta-llama__Llama-3.1-8B-Instruct");
  nlohmann::json v5 = v4;
  v5.erase("rope_scaling");
  v5.erase("rope_theta");
  v5["rope_parameters"] = {{"rope_type", "llama3"},   {"rope_theta", 500000.0},
                           {"factor", 8.0},           {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  const RopeConfig a = parse_model_config(v4, "v4").rope, b = parse_model_config(v5, "v5").rope;
  EXPECT_EQ(b.type, "llama3");
  EXPECT_EQ(a.theta, b.theta);
  EXPECT_EQ(a.factor, b.factor);
  EXPECT_EQ(a.original_max_position_embeddings, b.original_max_position_embeddings);
  v5["rope_parameters"] = {{"type", "linear"}, {"factor", 2.0}, {"partial_rotary_factor", 0.5}};
  const RopeConfig linear = parse_model_config(v5, "v5").rope;
  EXPECT_EQ(linear.type, "linear");
  EXPECT_EQ(linear.theta, 10000.0);  // neither rope_theta given
  EXPECT_EQ(linear.partial_rotary_factor, 0.5);
  v5["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 7.0}}}};
  EXPECT_EQ(parse_model_config(v5, "v5").rope.theta, 7.0);
}

TEST(HfConfig, ProjectFixturesInTransformers5Format) {
  const ModelConfig llama3 =
      load_model_config(std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/llama3/config.json");
  EXPECT_EQ(llama3.rope.type, "llama3");
  EXPECT_EQ(llama3.rope.theta, 500000.0);
  EXPECT_EQ(llama3.rope.factor, 8.0);
  const ModelConfig linear =
      load_model_config(std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/llama-linear-rope");
  EXPECT_EQ(linear.rope.type, "linear");
  EXPECT_EQ(linear.rope.factor, 4.0);
  EXPECT_EQ(linear.dtype, DType::F16);
  EXPECT_EQ(linear.n_kv_heads, 1);
}

TEST(HfConfig, DefaultsForAbsentKeys) {
  const nlohmann::json minimal = {{"architectures", {"LlamaForCausalLM"}},
                                  {"vocab_size", 100},
                                  {"hidden_size", 64},
                                  {"intermediate_size", 128},
                                  {"num_hidden_layers", 2},
                                  {"num_attention_heads", 4}};
  const ModelConfig config = parse_model_config(minimal, "minimal");
  EXPECT_EQ(config.n_kv_heads, 4);
  EXPECT_EQ(config.head_dim, 16);
  EXPECT_FALSE(config.tie_word_embeddings);
  EXPECT_EQ(config.rope.theta, 10000.0);
  EXPECT_EQ(config.layer_types.size(), 2u);
  EXPECT_TRUE(config.eos_token_ids.empty());
  EXPECT_NE(describe(config).find("LlamaForCausalLM"), std::string::npos);
}

}  // namespace
}  // namespace hadron
