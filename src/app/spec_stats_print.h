// Speculative decoding's counters on stderr (generate, bench).
#pragma once

#include <cstdio>

#include "engine/spec_decode.h"

namespace hadron::app {

// "speculation: N drafts, A of D draft tokens accepted (r%), T tokens per verified step;
// accepted by position: a1 a2 ...".
inline void print_spec_stats(const SpecStats& s, std::FILE* to = stderr) {
  const double drafts = static_cast<double>(std::max<int64_t>(1, s.n_drafts));
  std::fprintf(to,
               "speculation: %lld drafts, %lld of %lld draft tokens accepted (%.1f%%), %.2f tokens "
               "per verified step; accepted by position:",
               static_cast<long long>(s.n_drafts), static_cast<long long>(s.n_accepted_tokens),
               static_cast<long long>(s.n_draft_tokens),
               100.0 * s.n_accepted_tokens / std::max<int64_t>(1, s.n_draft_tokens),
               1.0 + s.n_accepted_tokens / drafts);
  for (int64_t n : s.accepted_per_position) std::fprintf(to, " %lld", static_cast<long long>(n));
  std::fprintf(to, "\n");
}

}  // namespace hadron::app
