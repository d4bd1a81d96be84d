#include "engine/spec_decode.h"

#include <algorithm>
#include <cmath>

#include "engine/spec_ngram.h"

namespace hadron {
namespace {

// A sequence accepting less than this fraction of its draft tokens pauses drafting for
// kPauseSteps steps, then probes again from kProbeAcceptance.
constexpr double kPauseBelow = 0.3;
constexpr int64_t kPauseSteps = 8;
constexpr double kProbeAcceptance = 0.5;
constexpr double kAcceptanceDecay = 0.5;  // weight of the past in the running rate

}  // namespace

SpecDecoder::SpecDecoder(const SpeculativeConfig& config) : config_(config) {
  stats_.accepted_per_position.assign(config.num_speculative_tokens, 0);
}

bool SpecDecoder::ready(SpecSeqState& state) const {
  if (state.paused_steps == 0) return true;
  --state.paused_steps;
  return false;
}

std::vector<int32_t> SpecDecoder::propose(std::span<const int32_t> tokens,
                                          const SpecSeqState& state, int64_t limit) const {
  // k shrinks with the acceptance rate: a draft past the expected accepted run costs compute
  // and rarely pays.
  const auto scaled = static_cast<int64_t>(
      std::ceil(static_cast<double>(config_.num_speculative_tokens) * state.acceptance));
  const int64_t k = std::min(limit, std::max<int64_t>(1, scaled));
  switch (config_.method) {
    case SpecMethod::kNgram:
      return propose_ngram(tokens, config_.prompt_lookup_min, config_.prompt_lookup_max, k);
  }
  return {};
}

void SpecDecoder::record(SpecSeqState& state, int64_t n_draft, int64_t n_accepted) {
  if (n_draft <= 0) return;
  ++stats_.n_drafts;
  stats_.n_draft_tokens += n_draft;
  stats_.n_accepted_tokens += n_accepted;
  for (int64_t i = 0;
       i < n_accepted && i < static_cast<int64_t>(stats_.accepted_per_position.size()); ++i)
    ++stats_.accepted_per_position[i];
  const double rate = static_cast<double>(n_accepted) / static_cast<double>(n_draft);
  state.acceptance = kAcceptanceDecay * state.acceptance + (1 - kAcceptanceDecay) * rate;
  if (state.acceptance < kPauseBelow) {
    state.paused_steps = kPauseSteps;
    state.acceptance = kProbeAcceptance;
  }
}

}  // namespace hadron
