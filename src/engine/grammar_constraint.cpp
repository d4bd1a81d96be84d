#include "engine/grammar_constraint.h"

#include <algorithm>
#include <limits>

namespace hadron {

void mask_logits(std::span<float> logits, const grammar::TokenMasker& masker,
                 grammar::Matcher& matcher) {
  const grammar::TokenVocabulary& vocab = masker.vocabulary();
  std::vector<uint32_t> mask(grammar::mask_words(vocab.size()));
  masker.fill_mask(matcher, mask);
  const bool none = std::all_of(mask.begin(), mask.end(), [](uint32_t w) { return w == 0; });
  if (none)
    for (int32_t t : vocab.eos_token_ids())
      if (t >= 0 && t < vocab.size()) mask[t >> 5] |= 1u << (t & 31);
  constexpr float kBanned = -std::numeric_limits<float>::infinity();
  const auto n = static_cast<int32_t>(logits.size());
  for (int32_t t = 0; t < n; ++t)
    if (t >= vocab.size() || !grammar::mask_allows(mask, t)) logits[t] = kBanned;
}

}  // namespace hadron
