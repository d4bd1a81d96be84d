// SpecDecoder: drafts for speculative decoding and the policy that sizes them.
//
// Each step a running sequence whose newest token is known may get up to k draft tokens
// (n-gram lookup now). The engine runs it as a chunk [newest, draft...] with logits for every
// position, samples each position as an ordinary step would and keeps the draft tokens while
// they equal what was sampled (engine/spec_verify.cpp, docs/adr/0010-speculative-decoding.md).
//
// Policy ("never slower"): speculation is off in steps with more than disable_by_batch_size
// running sequences (verification there costs compute the batch already uses); per sequence,
// a running acceptance rate scales its k, and a sequence whose acceptance falls below what a
// draft token costs (measured step times: StepCostModel) or below 30% stops drafting for a
// while, then probes again.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/spec_config.h"

namespace hadron {

struct SpecStats {
  int64_t n_drafts = 0;           // verified chunks (a sequence with a draft in a step)
  int64_t n_draft_tokens = 0;     // draft tokens verified
  int64_t n_accepted_tokens = 0;  // of them accepted
  // [num_speculative_tokens]: drafts whose i-th token was accepted.
  std::vector<int64_t> accepted_per_position;
  int64_t k_in_use = 0;  // the longest draft of the last step (0: none)
};

// Decode steps' wall time as fixed + per_token * n_tokens, fitted by least squares with
// exponential forgetting over steps with and without drafts.
class StepCostModel {
 public:
  void observe(int64_t n_tokens, double seconds);
  // The acceptance rate above which a draft token saves more time than it costs in a step of
  // n_seqs sequences (per_token * n_seqs / step time); 0 before both kinds of step were seen.
  double break_even(int64_t n_seqs) const;

 private:
  double w_ = 0, sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;  // forgetting sums
  double fixed_ = 0, per_token_ = 0;                    // the last well-conditioned fit
  bool fitted_ = false;
};

// A sequence's policy state.
struct SpecSeqState {
  double acceptance = 1.0;   // running fraction of its draft tokens accepted
  int64_t paused_steps = 0;  // steps left without drafts
};

class SpecDecoder {
 public:
  explicit SpecDecoder(const SpeculativeConfig& config);

  const SpeculativeConfig& config() const { return config_; }
  // Whether sequences may draft in a step with n_running sequences running.
  bool enabled_for(int64_t n_running) const { return n_running <= config_.disable_by_batch_size; }
  // Whether a sequence drafts this step (called once per step for each decoding sequence:
  // it counts a pause down).
  bool ready(SpecSeqState& state) const;
  // Draft tokens to follow `tokens` (prompt then output), at most `limit` of them.
  std::vector<int32_t> propose(std::span<const int32_t> tokens, const SpecSeqState& state,
                               int64_t limit) const;
  // A verified draft of n_draft tokens whose first n_accepted were accepted, in a step of
  // n_seqs sequences.
  void record(SpecSeqState& state, int64_t n_draft, int64_t n_accepted, int64_t n_seqs);
  // A decode step (every sequence one token and its draft) of n_tokens that took `seconds`.
  void observe_step(int64_t n_tokens, double seconds) { costs_.observe(n_tokens, seconds); }
  const StepCostModel& costs() const { return costs_; }
  void set_k_in_use(int64_t k) { stats_.k_in_use = k; }
  const SpecStats& stats() const { return stats_; }

 private:
  SpeculativeConfig config_;
  SpecStats stats_;
  StepCostModel costs_;
};

}  // namespace hadron
