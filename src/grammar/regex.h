// A regular-expression front end (the ECMAScript / Python subset JSON Schema patterns and
// vLLM's guided_regex use): literals, ., classes, \d \w \s and their negations, groups,
// alternation, * + ? {m,n} (lazy forms match the same strings). Backreferences, lookaround
// and word boundaries are refused: they have no automaton.
#pragma once

#include <string_view>

#include "grammar/grammar.h"

namespace hadron::grammar {

struct RegexOptions {
  // Characters a JSON string may hold unescaped only: '"', '\' and controls are left out of
  // '.', negated classes and \D \W \S, so a pattern inside a JSON string keeps it valid.
  bool json_string_chars = false;
};

// The expression of `pattern` (anchors ^ and $ are allowed only at its ends).
// `location` names the pattern in errors, which also give the offset.
ExprPtr parse_regex(std::string_view pattern, const std::string& location,
                    const GrammarLimits& limits, RegexOptions options = {});

// A grammar of one rule matching exactly the strings of `pattern`.
Grammar compile_regex(std::string_view pattern, const GrammarLimits& limits = {});

}  // namespace hadron::grammar
