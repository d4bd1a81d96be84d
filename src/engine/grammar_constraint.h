// Structured output in sampling: the grammar's mask on a row of logits, and its matcher
// advanced by the sampled token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "grammar/matcher.h"
#include "grammar/token_mask.h"

namespace hadron {

// Sets the logits of tokens the grammar refuses after the output so far to -inf (tokens past
// the tokenizer's vocabulary included). When it refuses every token (a grammar the
// vocabulary cannot spell), only end-of-sequence tokens stay.
void mask_logits(std::span<float> logits, const grammar::TokenMasker& masker,
                 grammar::Matcher& matcher);

// True when the output is a whole string of the grammar that no byte can extend.
inline bool grammar_complete(const grammar::Matcher& matcher) {
  return matcher.can_end() && !matcher.can_continue();
}

}  // namespace hadron
