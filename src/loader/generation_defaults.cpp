#include "loader/generation_defaults.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace hadron {

GenerationDefaults read_generation_defaults(const std::string& model_dir) {
  GenerationDefaults defaults;
  std::ifstream in(std::filesystem::path(model_dir) / "generation_config.json");
  if (!in) return defaults;
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) input_error("{}/generation_config.json is not a JSON object", model_dir);
  if (config.contains("eos_token_id")) {
    const auto& eos = config["eos_token_id"];
    if (eos.is_number_integer()) defaults.eos_token_ids.push_back(eos.get<int32_t>());
    if (eos.is_array())
      for (const auto& id : eos)
        if (id.is_number_integer()) defaults.eos_token_ids.push_back(id.get<int32_t>());
  }
  const bool sampling = config.value("do_sample", true);
  auto number = [&](const char* key) -> std::optional<float> {
    if (!config.contains(key) || !config[key].is_number()) return std::nullopt;
    const double value = config[key].get<double>();
    if (!(value >= 0 && value <= 1e6)) input_error("generation_config.json: {} = {}", key, value);
    return static_cast<float>(value);
  };
  if (sampling) defaults.temperature = number("temperature");
  defaults.top_p = number("top_p");
  if (const auto top_k = number("top_k")) defaults.top_k = static_cast<int>(*top_k);
  return defaults;
}

}  // namespace hadron
