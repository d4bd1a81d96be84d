#include "tokenizer/pattern_json.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace hadron::tok {

Pattern pattern_from_json(const nlohmann::json& json) {
  if (json.contains("String")) return {json.at("String").get<std::string>(), nullptr};
  if (json.contains("Regex")) {
    return {{}, std::make_shared<const Regex>(json.at("Regex").get<std::string>())};
  }
  input_error("tokenizer: pattern {} is neither {{\"String\": ...}} nor {{\"Regex\": ...}}",
              json.dump());
}

}  // namespace hadron::tok
