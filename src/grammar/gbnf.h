// llama.cpp's GBNF grammars: `name ::= alternatives` rules of "strings", [classes], ., rule
// names, ( groups ), and * + ? {m} {m,} {m,n}; '#' comments. The start rule is `root`.
#pragma once

#include <string_view>

#include "grammar/grammar.h"

namespace hadron::grammar {

Grammar compile_gbnf(std::string_view text, const GrammarLimits& limits = {});

}  // namespace hadron::grammar
