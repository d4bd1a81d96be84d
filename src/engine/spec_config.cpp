#include "engine/spec_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace hadron {
namespace {

using nlohmann::json;

int64_t integer_field(const json& object, const char* name, int64_t fallback, int64_t min,
                      int64_t max) {
  if (!object.contains(name)) return fallback;
  const json& value = object.at(name);
  if (!value.is_number_integer())
    input_error("--speculative-config: {} must be an integer; got {}", name, value.dump());
  const auto n = value.get<int64_t>();
  if (n < min || n > max)
    input_error("--speculative-config: {} must be in [{}, {}]; got {}", name, min, max, n);
  return n;
}

SpecMethod parse_method(const json& object) {
  if (!object.contains("method") || !object.at("method").is_string())
    input_error("--speculative-config: \"method\" (a string) is required; supported: ngram");
  const std::string method = object.at("method").get<std::string>();
  if (method == "ngram") return SpecMethod::kNgram;
  if (method == "mtp" || method == "eagle3" || method == "eagle" || method == "deepseek_mtp")
    input_error("--speculative-config: method \"{}\" is not implemented yet; supported now: ngram",
                method);
  input_error("--speculative-config: unknown method \"{}\"; supported: ngram", method);
}

}  // namespace

SpeculativeConfig parse_speculative_config(const std::string& text) {
  json object;
  try {
    object = json::parse(text);
  } catch (const json::parse_error& e) {
    input_error("--speculative-config is not valid JSON: {}", e.what());
  }
  if (!object.is_object()) input_error("--speculative-config must be a JSON object");
  for (const auto& [key, value] : object.items())
    if (key != "method" && key != "num_speculative_tokens" && key != "prompt_lookup_min" &&
        key != "prompt_lookup_max" && key != "disable_by_batch_size")
      input_error(
          "--speculative-config: unknown field \"{}\"; known: method, num_speculative_tokens, "
          "prompt_lookup_min, prompt_lookup_max, disable_by_batch_size",
          key);
  SpeculativeConfig config;
  config.method = parse_method(object);
  if (!object.contains("num_speculative_tokens"))
    input_error("--speculative-config: num_speculative_tokens is required");
  config.num_speculative_tokens =
      integer_field(object, "num_speculative_tokens", 0, 1, kMaxSpeculativeTokens);
  // A bound given alone moves the other's default out of its way.
  const bool has_min = object.contains("prompt_lookup_min");
  const bool has_max = object.contains("prompt_lookup_max");
  config.prompt_lookup_min =
      integer_field(object, "prompt_lookup_min", config.prompt_lookup_min, 1, 1024);
  config.prompt_lookup_max =
      integer_field(object, "prompt_lookup_max", config.prompt_lookup_max, 1, 1024);
  if (has_min && !has_max)
    config.prompt_lookup_max = std::max(config.prompt_lookup_max, config.prompt_lookup_min);
  if (has_max && !has_min)
    config.prompt_lookup_min = std::min(config.prompt_lookup_min, config.prompt_lookup_max);
  if (config.prompt_lookup_min > config.prompt_lookup_max)
    input_error("--speculative-config: prompt_lookup_min ({}) is above prompt_lookup_max ({})",
                config.prompt_lookup_min, config.prompt_lookup_max);
  config.disable_by_batch_size =
      integer_field(object, "disable_by_batch_size", config.disable_by_batch_size, 1, 1 << 20);
  return config;
}

}  // namespace hadron
