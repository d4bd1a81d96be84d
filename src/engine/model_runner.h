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

// How to sample one logits row on the device (ops/sampling.h semantics).
struct RowSampling {
  float temperature = 0;
  int32_t top_k = 0;
  float top_p = 1;
  float min_p = 0;
  uint64_t seed = 0;
  uint64_t step = 0;  // the sequence's output index: a fresh draw per token
};

class ModelRunner {
 public:
  // max_tokens: the most tokens one step may carry; max_logit_rows: the most rows the LM head
  // runs on at once (the sequences of a step). Both size the activation arena.
  ModelRunner(Backend& backend, Model& model, KvCache& kv, int64_t max_tokens,
              int64_t max_logit_rows);

  // Runs one step; returns logits [R, vocab] row-major, R = rows asked for, in step order.
  std::vector<float> step(std::span<const SequenceStep> steps);
  // Runs one step and samples each logits row on the device; only token ids come back.
  // sampling: one entry per logits row.
  std::vector<int32_t> step_and_sample(std::span<const SequenceStep> steps,
                                       std::span<const RowSampling> sampling);

  int64_t max_tokens() const { return max_tokens_; }
  size_t activation_peak_bytes() const { return arena_.high_water(); }

 private:
  BatchMeta build_meta(std::span<const SequenceStep> steps);
  // The final hidden states of the logits rows, [R, hidden], in the arena.
  Tensor forward_hidden(std::span<const SequenceStep> steps);
  SamplingBatch upload_sampling(std::span<const RowSampling> sampling);

  Backend& backend_;
  Model& model_;
  KvCache& kv_;
  int64_t max_tokens_;
  int64_t max_logit_rows_;
  Arena arena_;
  Buffer meta_storage_;
  Buffer sampling_storage_;
};

}  // namespace hadron
