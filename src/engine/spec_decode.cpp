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
constexpr double kCostMemory = 0.98;      // forgetting of StepCostModel per step

}  // namespace

void StepCostModel::observe(int64_t n_tokens, double seconds) {
  const auto x = static_cast<double>(n_tokens);
  w_ = kCostMemory * w_ + 1;
  sx_ = kCostMemory * sx_ + x;
  sy_ = kCostMemory * sy_ + seconds;
  sxx_ = kCostMemory * sxx_ + x * x;
  sxy_ = kCostMemory * sxy_ + x * seconds;
  const double spread = w_ * sxx_ - sx_ * sx_;  // w^2 times the variance of n_tokens
  if (spread < 0.05 * w_ * w_) return;          // too few steps with drafts to tell
  per_token_ = std::max(0.0, (w_ * sxy_ - sx_ * sy_) / spread);
  fixed_ = std::max(0.0, (sy_ - per_token_ * sx_) / w_);
  fitted_ = true;
}

double StepCostModel::break_even(int64_t n_seqs) const {
  if (!fitted_) return 0;
  const double step = fixed_ + per_token_ * static_cast<double>(n_seqs);
  return step > 0 ? per_token_ * static_cast<double>(n_seqs) / step : 0;
}

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

void SpecDecoder::record(SpecSeqState& state, int64_t n_draft, int64_t n_accepted, int64_t n_seqs) {
  if (n_draft <= 0) return;
  ++stats_.n_drafts;
  stats_.n_draft_tokens += n_draft;
  stats_.n_accepted_tokens += n_accepted;
  for (int64_t i = 0;
       i < n_accepted && i < static_cast<int64_t>(stats_.accepted_per_position.size()); ++i)
    ++stats_.accepted_per_position[i];
  const double rate = static_cast<double>(n_accepted) / static_cast<double>(n_draft);
  state.acceptance = kAcceptanceDecay * state.acceptance + (1 - kAcceptanceDecay) * rate;
  const double pays_above = config_.weigh_step_costs ? costs_.break_even(n_seqs) : 0;
  if (state.acceptance < std::max(kPauseBelow, pays_above)) {
    state.paused_steps = kPauseSteps;
    state.acceptance = kProbeAcceptance;
  }
}

}  // namespace hadron
