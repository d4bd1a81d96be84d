// The {"String": ...} / {"Regex": ...} pattern objects of tokenizer.json (Split, Replace).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "tokenizer/regex.h"

namespace hadron::tok {

struct Pattern {
  std::string literal;                 // set for {"String": ...}
  std::shared_ptr<const Regex> regex;  // set for {"Regex": ...}
};

// Throws InputError for anything else, or a regex that does not compile.
Pattern pattern_from_json(const nlohmann::json& json);

}  // namespace hadron::tok
