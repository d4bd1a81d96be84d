// ModelRunner: turns a step's sequences into BatchMeta, runs the model on its backend and
// returns fp32 logits, or tokens sampled on the device.
//
// Every step's inputs (index arrays, sampling columns) are written into one of two pinned
// host images in turn; the step's first op (Backend::begin_step) copies its image into one
// fixed device buffer, so their addresses never change, and no copy sits between one step's
// work and the next's. Decode-only steps of up to the largest captured batch replay a CUDA
// graph captured at start-up for the next padded batch size (padding rows: slot -1, context
// 0, greedy; their tokens are dropped). Sampled tokens come back into pinned memory by the
// step's last op (Backend::end_step) and an event, so the caller can schedule the next step
// while the device runs this one (launch / take_tokens).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/arena.h"
#include "kv/kv_cache.h"
#include "models/model.h"

namespace hadron {

// One sequence's share of a step: `tokens` are appended after `n_cached` tokens whose KV is
// already in the cache blocks `blocks` (which must also cover the new tokens). A token id
// below 0 is a placeholder for the token the previous launched step samples in row
// -id - 1 (Backend::begin_step), allowed in launch() only.
struct SequenceStep {
  std::span<const int32_t> tokens;
  int64_t n_cached = 0;
  std::span<const int32_t> blocks;
  bool all_logits = false;  // logits for every new token (scoring), else only the last
  // The linear-attention state slot (hybrid models; -1 otherwise). It holds the state after
  // the n_cached tokens, and is reset when n_cached is 0.
  int32_t state_slot = -1;
};

// How to sample one logits row on the device (ops/sampling.h semantics).
struct RowSampling {
  SampleRowParams params;
  uint64_t seed = 0;
  uint64_t step = 0;  // the sequence's output index: a fresh draw per token
};

struct RunnerLimits {
  int64_t max_tokens = 0;          // tokens in one step
  int64_t max_logit_rows = 0;      // rows the LM head runs on at once (sequences of a step)
  int64_t max_blocks_per_seq = 0;  // KV blocks of a --max-model-len sequence
};

class ModelRunner {
 public:
  ModelRunner(Backend& backend, Model& model, KvCache& kv, const RunnerLimits& limits);
  ~ModelRunner();

  // Captures decode steps of every padded batch size up to max_batch (after the KV cache is
  // allocated); each size runs once eagerly first, so every GEMM choice is made outside
  // capture. No-op on backends without graphs. Returns the number of graphs.
  int capture_decode_graphs(int64_t max_batch);
  // The padded batch sizes that get a graph: every size up to 16, multiples of 8 up to 256,
  // of 16 up to 512 (those up to max_batch).
  static std::vector<int64_t> graph_batch_sizes(int64_t max_batch);

  // Runs one step; returns logits [R, vocab] row-major, R = rows asked for, in step order.
  // Nothing may be in flight (take every launch's tokens first).
  std::vector<float> step(std::span<const SequenceStep> steps);
  // Queues one step with device sampling (one RowSampling per sequence) and returns before
  // the device has run it on asynchronous backends. At most two launches are in flight.
  void launch(std::span<const SequenceStep> steps, std::span<const RowSampling> sampling);
  // The sampled tokens of the oldest launch not yet taken, one per sequence (waits for it).
  std::vector<int32_t> take_tokens();
  size_t n_in_flight() const { return in_flight_.size(); }
  // launch + take_tokens.
  std::vector<int32_t> step_and_sample(std::span<const SequenceStep> steps,
                                       std::span<const RowSampling> sampling);

  int64_t max_tokens() const { return limits_.max_tokens; }
  size_t activation_peak_bytes() const { return arena_.high_water(); }
  int64_t n_graph_replays() const { return n_graph_replays_; }
  // Replays captured graphs (default) or runs every step eagerly with the same kernels.
  void set_graphs_enabled(bool enabled) { graphs_enabled_ = enabled; }

 private:
  struct StepInputs {
    BatchMeta meta;
    SamplingBatch sampling;
    Tensor device;      // U8: the part of inputs_ the step uses
    int64_t n_ids = 0;  // token ids at its start
    int parity = 0;     // its turn's parity: which image and tokens buffer
  };
  struct InFlight {
    std::unique_ptr<DeviceEvent> done;
    int parity = 0;  // the step's turn parity: which tokens buffer
    int64_t n_rows = 0;
  };

  // Writes the step's index arrays (padded with empty rows up to pad_to sequences; block
  // tables table_width wide, 0: the widest of the step) and sampling columns into the image
  // of the next turn; the returned tensors point into the device inputs buffer. Every call is
  // followed by exactly one begin_step on the device: the turns of host and device advance
  // together.
  StepInputs stage_inputs(std::span<const SequenceStep> steps,
                          std::span<const RowSampling> sampling, int64_t pad_to,
                          int64_t table_width);
  // begin_step, forward, logits of meta's rows, sampling into sampled_ and end_step: the
  // work a graph captures.
  void run_sampled(const StepInputs& inputs);
  DeviceGraph* graph_for(std::span<const SequenceStep> steps, int64_t& padded);

  Backend& backend_;
  Model& model_;
  KvCache& kv_;
  RunnerLimits limits_;
  Arena arena_;
  Buffer inputs_;                           // device: index arrays, then sampling columns
  Buffer images_[2], tokens_[2], counter_;  // StepStaging's memory
  StepStaging staging_;
  uint32_t n_turns_ = 0;  // images written
  Buffer sampled_;        // device: I32 [max_logit_rows], the last sampled tokens
  std::deque<InFlight> in_flight_;
  std::map<int64_t, std::unique_ptr<DeviceGraph>> graphs_;  // by padded batch size
  int64_t n_graph_replays_ = 0;
  bool graphs_enabled_ = true;
};

}  // namespace hadron
