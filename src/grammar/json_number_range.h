// Integers between optional bounds as a grammar expression (JSON form: no leading zeros,
// "-" only before a non-zero number).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "grammar/expr.h"
#include "grammar/grammar.h"

namespace hadron::grammar {

ExprPtr integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi);

// Numbers x within optional bounds (strict where `exclusive`), a subset written without an
// exponent: the integers in range, and I.F (F ending in a non-zero digit, so x lies strictly
// between I and I + 1, or -I - 1 and -I) where that whole interval is in range. Null when
// no such number exists. Bounds are within +-1e15.
struct NumberBound {
  double value = 0;
  bool exclusive = false;
};
ExprPtr number_range(std::optional<NumberBound> lo, std::optional<NumberBound> hi);

// The integers that are multiples of `multiple_of` (> 0), a subset of the numbers that are:
// one rule per remainder modulo the smallest integer multiple m. Null when m is over 100.
ExprPtr integer_multiples(GrammarBuilder& builder, double multiple_of, const std::string& name);

}  // namespace hadron::grammar
