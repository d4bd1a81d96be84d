// Helpers for the grammar tests.
#pragma once

#include <memory>
#include <string_view>

#include "grammar/grammar.h"
#include "grammar/matcher.h"

namespace hadron::grammar {

// True when the whole of `text` is a string of `grammar`.
inline bool matches(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  Matcher m(grammar);
  return m.advance(text) && m.can_end();
}

inline std::shared_ptr<const Grammar> share(Grammar g) {
  return std::make_shared<const Grammar>(std::move(g));
}

}  // namespace hadron::grammar
