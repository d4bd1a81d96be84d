// ModelConfig: every supported config.json normalised into one struct. All Hugging Face
// quirks are handled here once (text_config nesting, rope_scaling vs rope_parameters,
// head_dim absent or decoupled, layer_types, partial_rotary_factor, MLA / MoE / linear
// attention fields, quantization_config). Unknown keys are ignored; a missing required key
// is an InputError naming the file and the key.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace hadron {

struct RopeConfig {
  std::string type = "default";  // default | linear | dynamic | llama3 | yarn | longrope | mrope
  double theta = 10000.0;
  double factor = 1.0;
  double partial_rotary_factor = 1.0;  // fraction of head_dim that is rotated
  // llama3
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;
  // yarn
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double mscale = 1.0;
  double mscale_all_dim = 0.0;
  double attention_factor = 0.0;  // 0: derived from factor
  bool truncate = true;
  std::vector<int64_t> mrope_section;  // multimodal rope sections (Qwen3.5)
  bool mrope_interleaved = false;      // sections interleaved across frequencies (Qwen3.5)
  bool interleaved = false;            // rotate adjacent pairs rather than halves
};

struct MoeConfig {
  int64_t n_experts = 0;            // routed experts; 0 for dense models
  int64_t n_experts_per_token = 0;  // top-k
  int64_t expert_intermediate_size = 0;
  int64_t n_shared_experts = 0;  // 1 when only shared_expert_intermediate_size is given
  // all shared experts together; n_shared_experts x expert_intermediate_size when not given
  int64_t shared_expert_intermediate_size = 0;
  bool norm_topk_prob = true;
  std::string scoring_func = "softmax";  // softmax | sigmoid
  std::string topk_method;               // e.g. noaux_tc
  int64_t n_group = 1;
  int64_t topk_group = 1;
  double routed_scaling_factor = 1.0;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;  // dense layers among MoE ones
  int64_t first_k_dense_replace = 0;     // leading dense layers
  double router_aux_loss_coef = 0.0;
};

struct MlaConfig {
  int64_t q_lora_rank = 0;  // 0: no q compression
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t qk_head_dim = 0;  // qk_nope_head_dim + qk_rope_head_dim
  // DeepSeek-V3.2 / GLM-5 sparse attention indexer
  int64_t index_n_heads = 0;
  int64_t index_head_dim = 0;
  int64_t index_topk = 0;               // > 0: sparse attention
  bool index_rope_interleaved = false;  // indexer_rope_interleave: its RoPE rotates adjacent pairs
};

struct LinearAttentionConfig {  // gated DeltaNet (Qwen3-Next, Qwen3.5)
  int64_t n_key_heads = 0;
  int64_t n_value_heads = 0;
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int64_t conv_kernel_dim = 0;
  int64_t full_attention_interval = 0;
  DType state_dtype = DType::F32;  // mamba_ssm_dtype: the recurrent state's
};

struct QuantConfig {
  std::string method;  // empty: none; fp8 | mxfp4 | ...
  std::string fmt;     // e4m3 ...
  std::string activation_scheme;
  std::vector<int64_t> weight_block_size;
  std::vector<std::string> modules_to_not_convert;
  std::string scale_fmt;
};

enum class LayerKind : uint8_t { kFullAttention, kSlidingAttention, kLinearAttention };

struct ModelConfig {
  std::string architecture;  // architectures[0]
  std::string model_type;
  std::string source;  // file it came from, for messages

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;  // explicit, or qk_rope_head_dim for MLA, or hidden_size / n_heads
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  std::string hidden_act = "silu";
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  DType dtype = DType::BF16;           // torch_dtype / dtype
  int64_t sliding_window = 0;          // 0: none (also when use_sliding_window is false)
  std::vector<LayerKind> layer_types;  // always one per layer; full attention when not given
  std::vector<int64_t> bos_token_ids;
  std::vector<int64_t> eos_token_ids;
  int64_t n_mtp_layers = 0;       // num_nextn_predict_layers / mtp_num_hidden_layers
  bool attn_output_gate = false;  // attention output times sigmoid(gate) from q_proj (Qwen3.5)

  RopeConfig rope;
  MoeConfig moe;
  MlaConfig mla;
  LinearAttentionConfig linear_attention;
  QuantConfig quant;

  nlohmann::json raw;  // the (text) config as read, for architecture-specific extras

  bool is_moe() const { return moe.n_experts > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool is_sparse_attention() const { return is_mla() && mla.index_topk > 0; }
};

// Parses a config.json object. `source` names it in errors.
ModelConfig parse_model_config(const nlohmann::json& json, const std::string& source);
// Reads DIR/config.json (or a config file path), with `overrides` (a JSON object, or null for
// none) merged in by apply_hf_overrides before it is parsed.
ModelConfig load_model_config(const std::string& path, const nlohmann::json& overrides = nullptr);

// vLLM's --hf-overrides: parses `text` strictly as a JSON object (empty text: null, no
// overrides); InputError naming the flag for bad JSON or any other JSON value.
nlohmann::json parse_hf_overrides(const std::string& text);
// Merges `overrides` into the config object `config` as vLLM does: an object value merges
// recursively into an object already there, any other value replaces or adds the key. Unknown
// keys are kept (transformers keeps them as attributes). In a config with a text_config, a key
// that text_config has and the top level lacks goes into text_config, so {"num_hidden_layers":
// 2} reduces the layers of a nested config too, and a layer_types list the overrides leave out
// keeps its first num_hidden_layers entries (the ones vLLM reads).
void apply_hf_overrides(nlohmann::json& config, const nlohmann::json& overrides);
// A human-readable dump of the normalised fields (for `hadron inspect`).
std::string describe(const ModelConfig& config);

}  // namespace hadron
