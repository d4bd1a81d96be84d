// Sequence: one completion being generated (a request with n > 1 has n of them).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/sampler.h"
#include "engine/sampling_params.h"
#include "kv/block_manager.h"

namespace hadron {

enum class SeqState : uint8_t { kWaiting, kRunning, kPreempted, kFinished };
enum class FinishReason : uint8_t { kNone, kStop, kLength, kAbort };

const char* finish_reason_name(FinishReason reason);

struct Sequence {
  Sequence(uint64_t request_id, int index, std::vector<int32_t> prompt,
           std::shared_ptr<const SamplingParams> params, uint64_t seed, uint64_t cache_salt);

  uint64_t request_id;
  int index;  // among the request's n completions
  std::shared_ptr<const SamplingParams> params;
  std::vector<int32_t> tokens;  // prompt, then generated tokens
  int64_t prompt_len;
  uint64_t cache_salt;  // mixed into prefix-cache hashes
  bool use_prefix_cache = true;
  Sampler sampler;

  SeqState state = SeqState::kWaiting;
  FinishReason finish_reason = FinishReason::kNone;
  int64_t n_computed = 0;       // tokens whose KV is in `blocks`
  std::vector<int32_t> blocks;  // KV-cache blocks, in order
  int32_t state_slot = -1;      // linear-attention state slot while running (hybrid models)
  // Hybrid models with n > 1: the first completion computes no further than this many tokens
  // (a block boundary) until its siblings are forked from it, KV blocks shared and state copied.
  int64_t fork_at = -1;
  BlockHashCursor hash_cursor;  // prefix-cache hashing progress over `blocks`
  // Hybrid models: the cached KV prefix found at admission (tokens). A prefill chunk ends
  // there, so the state at this shared prefix is snapshotted for the next request (ADR 0011).
  int64_t cached_prefix_end = 0;
  int64_t n_preemptions = 0;
  int64_t n_computed_lost = 0;  // the most tokens a preemption dropped: those are recomputed
  // Speculative draft tokens to follow tokens.back() this step (engine/spec_*); never part of
  // `tokens`, so never hashed into the prefix cache. The scheduler may drop them.
  std::vector<int32_t> draft;

  int64_t n_output() const { return static_cast<int64_t>(tokens.size()) - prompt_len; }
  int64_t n_uncomputed() const { return static_cast<int64_t>(tokens.size()) - n_computed; }
};

}  // namespace hadron
