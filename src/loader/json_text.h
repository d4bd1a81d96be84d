// Reading the JSON files of a checkpoint strictly: a duplicate key or absurd nesting is an
// InputError naming the file, never a silently dropped value or a stack overflow.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace hadron {

// serde_json's recursion limit, which the safetensors reference library inherits.
inline constexpr int kMaxJsonDepth = 128;

// Parses `text` as one JSON value. Duplicate keys in any object, nesting deeper than
// kMaxJsonDepth and syntax errors throw InputError naming `source`.
nlohmann::json parse_json_strict(std::string_view text, const std::string& source);

// The whole file at `path`; InputError when it cannot be read or exceeds max_bytes.
std::string read_text_file(const std::string& path, size_t max_bytes);

}  // namespace hadron
