// libFuzzer: config.json text of any bytes becomes a consistent ModelConfig or an InputError;
// anything else (crash, sanitizer report, other exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "loader/hf_config.h"
#include "loader/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json json = hadron::parse_json_strict(text, "fuzz/config.json");
    const hadron::ModelConfig config = hadron::parse_model_config(json, "fuzz/config.json");
    if (static_cast<int64_t>(config.layer_types.size()) != config.n_layers) __builtin_trap();
    if (config.head_dim <= 0 || config.n_kv_heads <= 0) __builtin_trap();
    if (config.n_heads % config.n_kv_heads != 0) __builtin_trap();
    if (hadron::describe(config).empty()) __builtin_trap();
  } catch (const hadron::InputError&) {
  }
  return 0;
}
