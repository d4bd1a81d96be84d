// Checked integers from tokenizer.json: nlohmann's get<int>() on a float or an out-of-range
// value is undefined behaviour, so every integer read goes through here.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace hadron::tok {

// An integer in [min, max]; InputError naming `what` for anything else (floats included).
int64_t json_integer(const nlohmann::json& value, int64_t min, int64_t max, std::string_view what);

inline int32_t json_token_id(const nlohmann::json& value) {
  return static_cast<int32_t>(
      json_integer(value, 0, std::numeric_limits<int32_t>::max(), "token id"));
}

}  // namespace hadron::tok
