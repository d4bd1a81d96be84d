// ModelRunner: turns a step's sequences into BatchMeta, runs the model on its backend and
// returns fp32 logits on the host.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/arena.h"
#include "kv/kv_cache.h"
#include "models/model.h"

namespace hadron {

// One sequence's share of a step: `tokens` are appended after `n_cached` tokens whose KV is
// already in the cache blocks `blocks` (which must also cover the new tokens).
struct SequenceStep {
  std::span<const int32_t> tokens;
  int64_t n_cached = 0;
  std::span<const int32_t> blocks;
  bool all_logits = false;  // logits for every new token (scoring), else only the last
};

class ModelRunner {
 public:
  // max_tokens: the most tokens one step may carry (sizes the activation arena).
  ModelRunner(Backend& backend, Model& model, KvCache& kv, int64_t max_tokens);

  // Runs one step; returns logits [R, vocab] row-major, R = rows asked for, in step order.
  std::vector<float> step(std::span<const SequenceStep> steps);

  int64_t max_tokens() const { return max_tokens_; }
  size_t activation_peak_bytes() const { return arena_.high_water(); }

 private:
  BatchMeta build_meta(std::span<const SequenceStep> steps);

  Backend& backend_;
  Model& model_;
  KvCache& kv_;
  int64_t max_tokens_;
  Arena arena_;
  Buffer meta_storage_;
};

}  // namespace hadron
