#include "loader/config_reader.h"

#include <cmath>

#include "core/error.h"

namespace hadron {

using nlohmann::json;

namespace {

std::string excerpt(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) {
    text.resize(57);
    text += "...";
  }
  return text;
}

}  // namespace

ConfigReader::ConfigReader(std::vector<const json*> scopes, std::string source, std::string prefix)
    : scopes_(std::move(scopes)), source_(std::move(source)), prefix_(std::move(prefix)) {}

const json* ConfigReader::find(std::string_view key) const {
  for (const json* scope : scopes_) {
    if (scope == nullptr || !scope->is_object()) continue;
    const auto it = scope->find(key);
    if (it != scope->end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::optional<std::string_view> ConfigReader::first_present(
    std::initializer_list<std::string_view> keys) const {
  for (std::string_view key : keys)
    if (has(key)) return key;
  return std::nullopt;
}

void ConfigReader::fail(std::string_view key, std::string_view problem) const {
  input_error("{}: key '{}{}' {}", source_, prefix_, key, problem);
}

int64_t ConfigReader::to_integer(const json& value, std::string_view key) const {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) fail(key, "is too large");
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {  // 4096.0 is accepted, 0.5 is not
    const double number = value.get<double>();
    if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 0x1p53)
      return static_cast<int64_t>(number);
  }
  fail(key, "must be an integer, got " + excerpt(value));
}

int64_t ConfigReader::integer(std::string_view key, int64_t fallback) const {
  const json* value = find(key);
  if (value == nullptr) return fallback;
  const int64_t result = to_integer(*value, key);
  if (result < 0) fail(key, "must not be negative, got " + excerpt(*value));
  return result;
}

int64_t ConfigReader::required_integer(std::string_view key) const {
  if (!has(key)) fail(key, "is missing (required)");
  const int64_t result = integer(key, 0);
  if (result <= 0) fail(key, "must be positive, got " + std::to_string(result));
  return result;
}

double ConfigReader::number(std::string_view key, double fallback) const {
  const json* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_number()) fail(key, "must be a number, got " + excerpt(*value));
  const double result = value->get<double>();
  if (!std::isfinite(result)) fail(key, "must be finite");
  return result;
}

bool ConfigReader::boolean(std::string_view key, bool fallback) const {
  const json* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail(key, "must be true or false, got " + excerpt(*value));
  return value->get<bool>();
}

std::string ConfigReader::string(std::string_view key, std::string fallback) const {
  const json* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) fail(key, "must be a string, got " + excerpt(*value));
  return value->get<std::string>();
}

std::vector<int64_t> ConfigReader::integers(std::string_view key) const {
  const json* value = find(key);
  if (value == nullptr) return {};
  if (!value->is_array()) return {to_integer(*value, key)};
  std::vector<int64_t> result;
  for (const json& item : *value) result.push_back(to_integer(item, key));
  return result;
}

std::vector<std::string> ConfigReader::strings(std::string_view key) const {
  const json* value = find(key);
  if (value == nullptr) return {};
  if (!value->is_array()) fail(key, "must be a list of strings, got " + excerpt(*value));
  std::vector<std::string> result;
  for (const json& item : *value) {
    if (!item.is_string()) fail(key, "must hold only strings, got " + excerpt(item));
    result.push_back(item.get<std::string>());
  }
  return result;
}

std::optional<ConfigReader> ConfigReader::child(std::string_view key) const {
  const json* value = find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_object()) fail(key, "must be an object, got " + excerpt(*value));
  return ConfigReader({value}, source_, prefix_ + std::string(key) + ".");
}

}  // namespace hadron
