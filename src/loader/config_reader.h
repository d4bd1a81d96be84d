// Typed lookups into a config.json with messages that name the file and the key. A key is
// looked up in each scope in turn (text_config first, then the top level); JSON null counts as
// absent, as Hugging Face writes null for "not set".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hadron {

class ConfigReader {
 public:
  // `prefix` names the enclosing object in messages, e.g. "rope_parameters.".
  ConfigReader(std::vector<const nlohmann::json*> scopes, std::string source,
               std::string prefix = "");

  // The value of the first scope holding `key` with a non-null value; nullptr when none does.
  const nlohmann::json* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The first of `keys` that is present, or nullopt.
  std::optional<std::string_view> first_present(std::initializer_list<std::string_view> keys) const;

  int64_t integer(std::string_view key, int64_t fallback) const;  // non-negative
  int64_t required_integer(std::string_view key) const;           // positive
  double number(std::string_view key, double fallback) const;     // finite
  bool boolean(std::string_view key, bool fallback) const;
  std::string string(std::string_view key, std::string fallback) const;
  std::vector<int64_t> integers(std::string_view key) const;     // one integer or a list of them
  std::vector<std::string> strings(std::string_view key) const;  // a list of strings
  // A reader over the object at `key` (only that object, no fallback); nullopt when absent.
  std::optional<ConfigReader> child(std::string_view key) const;

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;
  const std::string& source() const { return source_; }

 private:
  int64_t to_integer(const nlohmann::json& value, std::string_view key) const;

  std::vector<const nlohmann::json*> scopes_;
  std::string source_;
  std::string prefix_;
};

}  // namespace hadron
