// config.json -> ModelConfig: identity and dimensions here, the sections in config_sections.cpp.
#include "loader/hf_config.h"

#include <filesystem>

#include "core/error.h"
#include "loader/config_sections.h"
#include "loader/json_text.h"

namespace hadron {
namespace {

using nlohmann::json;

constexpr size_t kMaxConfigBytes = 64 << 20;

DType read_dtype(const ConfigReader& config) {
  std::string name = config.string("dtype", config.string("torch_dtype", "bfloat16"));
  if (name.starts_with("torch.")) name = name.substr(6);
  if (name == "bfloat16") return DType::BF16;
  if (name == "float16" || name == "half") return DType::F16;
  if (name == "float32" || name == "float") return DType::F32;
  config.fail("dtype", "'" + name + "' is not supported (bfloat16, float16, float32)");
}

void read_identity(const ConfigReader& config, const json& root, ModelConfig& out) {
  const auto architectures = root.find("architectures");
  if (architectures == root.end() || !architectures->is_array() || architectures->empty() ||
      !(*architectures)[0].is_string())
    config.fail("architectures", "must be a non-empty list of names");
  out.architecture = (*architectures)[0].get<std::string>();
  const auto model_type = root.find("model_type");
  if (model_type != root.end() && model_type->is_string())
    out.model_type = model_type->get<std::string>();
  out.dtype = read_dtype(config);
  out.bos_token_ids = config.integers("bos_token_id");
  out.eos_token_ids = config.integers("eos_token_id");
}

void read_dimensions(const ConfigReader& config, ModelConfig& out) {
  out.vocab_size = config.required_integer("vocab_size");
  if (out.vocab_size > (int64_t{1} << 31)) config.fail("vocab_size", "is too large");
  out.hidden_size = config.required_integer("hidden_size");
  out.n_layers = config.required_integer("num_hidden_layers");
  out.n_heads = config.required_integer("num_attention_heads");
  if (out.hidden_size > kMaxDim) config.fail("hidden_size", "is too large");
  if (out.n_layers > kMaxLayers) config.fail("num_hidden_layers", "is too large");
  if (out.n_heads > kMaxDim) config.fail("num_attention_heads", "is too large");
  out.n_kv_heads = config.integer("num_key_value_heads", out.n_heads);
  if (out.n_kv_heads <= 0 || out.n_heads % out.n_kv_heads != 0)
    config.fail("num_key_value_heads", "must be positive and divide num_attention_heads");
  out.intermediate_size = bounded_integer(config, "intermediate_size", 0, kMaxDim);
  out.max_position_embeddings = config.integer("max_position_embeddings", 0);
  out.rms_norm_eps = config.number("rms_norm_eps", out.rms_norm_eps);
  if (out.rms_norm_eps < 0) config.fail("rms_norm_eps", "must not be negative");
  out.hidden_act = config.string("hidden_act", out.hidden_act);
  out.tie_word_embeddings = config.boolean("tie_word_embeddings", false);
  out.attention_bias = config.boolean("attention_bias", false);
  out.mlp_bias = config.boolean("mlp_bias", false);
  out.attn_output_gate = config.boolean("attn_output_gate", false);
  out.n_mtp_layers = bounded_integer(config, "num_nextn_predict_layers",
                                     config.integer("mtp_num_hidden_layers", 0), kMaxLayers);
}

// head_dim: explicit, the rope part of an MLA head, or hidden_size / heads.
int64_t read_head_dim(const ConfigReader& config, const ModelConfig& out) {
  int64_t fallback = out.hidden_size / out.n_heads;
  if (out.is_mla()) fallback = out.mla.qk_rope_head_dim;
  const int64_t head_dim = bounded_integer(config, "head_dim", fallback, kMaxDim);
  if (head_dim <= 0) config.fail("head_dim", "must be positive (hidden_size / heads is 0)");
  return head_dim;
}

void read_attention_layout(const ConfigReader& config, ModelConfig& out) {
  out.sliding_window = config.integer("sliding_window", 0);
  if (!config.boolean("use_sliding_window", true)) out.sliding_window = 0;
  out.layer_types = read_layer_types(config, out.n_layers, out.sliding_window,
                                     out.linear_attention.full_attention_interval);
  bool has_sliding = false, has_linear = false;
  for (LayerKind kind : out.layer_types) {
    has_sliding |= kind == LayerKind::kSlidingAttention;
    has_linear |= kind == LayerKind::kLinearAttention;
  }
  if (has_sliding && out.sliding_window <= 0)
    config.fail("sliding_window", "must be positive when layers use sliding attention");
  const LinearAttentionConfig& linear = out.linear_attention;
  if (has_linear && (linear.n_key_heads <= 0 || linear.n_value_heads <= 0 ||
                     linear.key_head_dim <= 0 || linear.value_head_dim <= 0 ||
                     linear.conv_kernel_dim <= 0 || linear.n_value_heads % linear.n_key_heads))
    config.fail("linear_num_value_heads",
                "and the other linear_* sizes must be positive (value heads a multiple of key "
                "heads) when layers use linear attention");
}

void read_all(const ConfigReader& config, const json& root, ModelConfig& out) {
  read_identity(config, root, out);
  read_dimensions(config, out);
  out.mla = read_mla(config);
  out.head_dim = read_head_dim(config, out);
  out.rope = read_rope(config, out.max_position_embeddings);
  // transformers' DeepseekV3Config defaults rope_interleave to true (DeepSeek's and Moonshot's
  // own modeling code always rotates adjacent pairs of the rope part); its DeepSeek-V3.2 model
  // rotates pairs without reading the key.
  if (!config.has("rope_interleave") &&
      (out.model_type == "deepseek_v3" || out.model_type == "kimi_k2" ||
       out.model_type == "deepseek_v32"))
    out.rope.interleaved = true;
  out.moe = read_moe(config, out.intermediate_size, out.n_layers);
  if (!out.is_moe() && out.intermediate_size <= 0)
    config.fail("intermediate_size", "is missing (required by a dense model)");
  out.linear_attention = read_linear_attention(config);
  read_attention_layout(config, out);
  out.quant = read_quant(config);
}

}  // namespace

ModelConfig parse_model_config(const json& root, const std::string& source) {
  if (!root.is_object())
    input_error("{}: a model config must be a JSON object, got {}", source, root.type_name());
  const json* text = &root;
  const auto nested = root.find("text_config");
  if (nested != root.end() && !nested->is_null()) {
    if (!nested->is_object())
      input_error("{}: key 'text_config' must be an object, got {}", source, nested->type_name());
    text = &*nested;
  }
  const ConfigReader config({text, &root}, source);
  ModelConfig out;
  out.source = source;
  try {
    read_all(config, root, out);
  } catch (const json::exception& e) {  // a type check missed somewhere: still bad input
    input_error("{}: {}", source, e.what());
  }
  out.raw = *text;
  return out;
}

ModelConfig load_model_config(const std::string& path, const json& overrides) {
  std::error_code error;
  const std::string file = std::filesystem::is_directory(path, error)
                               ? (std::filesystem::path(path) / "config.json").string()
                               : path;
  json root = parse_json_strict(read_text_file(file, kMaxConfigBytes), file);
  if (overrides.is_null()) return parse_model_config(root, file);
  if (!root.is_object())
    input_error("{}: a model config must be a JSON object, got {}", file, root.type_name());
  apply_hf_overrides(root, overrides);
  return parse_model_config(root, file + " with --hf-overrides");
}

json parse_hf_overrides(const std::string& text) {
  if (text.empty()) return nullptr;
  json overrides = parse_json_strict(text, "--hf-overrides");
  if (!overrides.is_object()) {
    input_error(
        "--hf-overrides must be a JSON object such as '{{\"num_hidden_layers\": 2}}', got {}",
        overrides.type_name());
  }
  return overrides;
}

void apply_hf_overrides(json& config, const json& overrides) {
  HADRON_CHECK(config.is_object() && overrides.is_object(), "overrides apply to objects");
  const auto text = config.find("text_config");
  json* text_config = text != config.end() && text->is_object() ? &*text : nullptr;
  json* new_layer_count = nullptr;  // the object whose num_hidden_layers was set
  bool layer_types_set = false;
  for (const auto& [key, value] : overrides.items()) {
    json* target = &config;
    if (text_config != nullptr && !config.contains(key) && text_config->contains(key))
      target = text_config;
    json& slot = (*target)[key];
    if (slot.is_object() && value.is_object()) {
      apply_hf_overrides(slot, value);
    } else {
      slot = value;
    }
    if (key == "num_hidden_layers") new_layer_count = target;
    layer_types_set |= key == "layer_types";
  }
  // vLLM reads the first num_hidden_layers entries of layer_types: fewer layers keep the kinds
  // of the first ones unless the overrides give the list too.
  if (new_layer_count == nullptr || layer_types_set) return;
  json& n_layers = (*new_layer_count)["num_hidden_layers"];
  const auto types = new_layer_count->find("layer_types");
  if (n_layers.is_number_unsigned() && types != new_layer_count->end() && types->is_array() &&
      types->size() > n_layers.get<size_t>()) {
    types->erase(types->begin() + n_layers.get<std::ptrdiff_t>(), types->end());
  }
}

}  // namespace hadron
