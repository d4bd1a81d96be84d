// SpecDecoder: drafts for speculative decoding and the policy that sizes them.
//
// Each step a running sequence whose newest token is known may get up to k draft tokens
// (n-gram lookup now). The engine runs it as a chunk [newest, draft...] with logits for every
// position, samples each position as an ordinary step would and keeps the draft tokens while
// they equal what was sampled (engine/spec_verify.cpp, docs/adr/0010-speculative-decoding.md).
//
// Policy ("never slower"): speculation is off in steps with more than disable_by_batch_size
// running sequences (verification there costs compute the batch already uses); per sequence,
// a running acceptance rate scales its k, and a sequence whose drafts are mostly rejected stops
// drafting for a while, then probes again.
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
  // A verified draft of n_draft tokens whose first n_accepted were accepted.
  void record(SpecSeqState& state, int64_t n_draft, int64_t n_accepted);
  void set_k_in_use(int64_t k) { stats_.k_in_use = k; }
  const SpecStats& stats() const { return stats_; }

 private:
  SpeculativeConfig config_;
  SpecStats stats_;
};

}  // namespace hadron
