// Integers between optional bounds as a grammar expression (JSON form: no leading zeros,
// "-" only before a non-zero number).
#pragma once

#include <cstdint>
#include <optional>

#include "grammar/expr.h"

namespace hadron::grammar {

ExprPtr integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace hadron::grammar
