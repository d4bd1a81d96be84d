// n-gram prompt lookup: draft tokens copied from earlier in the sequence itself.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hadron {

// For n from max_n down to min_n: when the last n of `tokens` (prompt then output) also occur
// earlier, the up to `k` tokens that followed their latest earlier occurrence. Empty when no
// suffix of at least min_n tokens recurs. O(len(tokens) * max_n) per call.
std::vector<int32_t> propose_ngram(std::span<const int32_t> tokens, int64_t min_n, int64_t max_n,
                                   int64_t k);

}  // namespace hadron
