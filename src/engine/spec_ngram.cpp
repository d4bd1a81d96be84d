#include "engine/spec_ngram.h"

#include <algorithm>

namespace hadron {

std::vector<int32_t> propose_ngram(std::span<const int32_t> tokens, int64_t min_n, int64_t max_n,
                                   int64_t k) {
  const auto len = static_cast<int64_t>(tokens.size());
  if (k <= 0) return {};
  for (int64_t n = std::min(max_n, len - 1); n >= min_n && n >= 1; --n) {
    const auto suffix = tokens.subspan(len - n, n);
    // Latest occurrence first: it starts at most at len - n - 1, so a token follows it.
    for (int64_t start = len - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int64_t from = start + n;
      const int64_t to = std::min(len, from + k);
      return std::vector<int32_t>(tokens.begin() + from, tokens.begin() + to);
    }
  }
  return {};
}

}  // namespace hadron
