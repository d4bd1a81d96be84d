// JSON <-> template values. Objects keep their key order (ordered_json), as Python dicts do.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "chat/value.h"

namespace hadron::chat {

Value value_from_json(const nlohmann::ordered_json& j);

// The arguments of Python's json.dumps that templates use through transformers' `tojson`.
struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // None: one line; a number n becomes n spaces
  std::optional<std::string> item_separator;
  std::optional<std::string> key_separator;
  bool sort_keys = false;
};

// Python's json.dumps(value, ...); throws InputError for values JSON cannot hold.
std::string json_dumps(const Value& v, const JsonDumpOptions& options);

}  // namespace hadron::chat
