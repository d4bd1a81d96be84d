// Character helpers the regex and GBNF front ends share.
#pragma once

#include <vector>

#include "grammar/expr.h"

namespace hadron::grammar {

// \d, \w, \s (ASCII, as JSON Schema's ECMAScript patterns without the u flag for \d and \w).
std::vector<CodePointRange> shorthand_class(char letter);

// The value of a hexadecimal digit, or -1.
int hex_digit(char c);

}  // namespace hadron::grammar
