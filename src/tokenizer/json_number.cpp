#include "tokenizer/json_number.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace hadron::tok {

int64_t json_integer(const nlohmann::json& value, int64_t min, int64_t max, std::string_view what) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v <= static_cast<uint64_t>(max) && static_cast<int64_t>(v) >= min)
      return static_cast<int64_t>(v);
  } else if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v >= min && v <= max) return v;
  }
  const bool negative =
      value.is_number_integer() && !value.is_number_unsigned() && value.get<int64_t>() < 0;
  input_error("{} must be an integer in [{}, {}], got {}{}", what, min, max, value.dump(),
              negative ? " (negative)" : "");
}

}  // namespace hadron::tok
