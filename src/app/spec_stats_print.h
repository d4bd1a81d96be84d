// Speculative decoding's counters on stderr (generate, bench).
#pragma once

#include <algorithm>
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

// The same as one JSON object on its own line: {"spec_drafts": .., "spec_draft_tokens": ..,
// "spec_accepted_tokens": .., "spec_accepted_per_position": [..]}.
inline void print_spec_stats_json(const SpecStats& s, std::FILE* to = stdout) {
  std::fprintf(
      to,
      "{\"spec_drafts\": %lld, \"spec_draft_tokens\": %lld, \"spec_accepted_tokens\": %lld, "
      "\"spec_accepted_per_position\": [",
      static_cast<long long>(s.n_drafts), static_cast<long long>(s.n_draft_tokens),
      static_cast<long long>(s.n_accepted_tokens));
  for (size_t i = 0; i < s.accepted_per_position.size(); ++i)
    std::fprintf(to, "%s%lld", i ? ", " : "", static_cast<long long>(s.accepted_per_position[i]));
  std::fprintf(to, "]}\n");
}

}  // namespace hadron::app
