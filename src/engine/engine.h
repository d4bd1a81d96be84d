// Engine: continuous batching over a LoadedModel. Requests are added and aborted between
// steps; each step schedules, runs the model, samples and reports what every sequence
// produced. Not thread-safe: one thread drives it (the server wraps it in a loop thread).
//
// With async scheduling (GPU backends by default) a step that samples on the device is only
// launched: step() schedules step N+1 (each sequence of step N holding a placeholder token
// that the device fills in), launches it, then postprocesses step N's tokens while the device
// runs N+1, and returns N's outputs. A sequence that stops in step N has had one more token
// computed in N+1, which is dropped. Steps that need logits on the host wait for the step
// in flight first, so their outputs are exactly the synchronous ones.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/detokenizer.h"
#include "engine/loaded_model.h"
#include "engine/logits_processor.h"
#include "engine/scheduler.h"
#include "engine/spec_decode.h"
#include "engine/stop_checker.h"
#include "grammar/matcher.h"

namespace hadron {

// What one sequence produced in one step.
struct RequestOutput {
  uint64_t request_id = 0;
  int index = 0;                          // which of the request's n completions
  std::vector<int32_t> token_ids;         // new tokens this step
  std::vector<Logprobs> logprobs;         // per new token, when asked
  std::vector<Logprobs> prompt_logprobs;  // once, with the first output, when asked
  std::string text;                       // new text this step (with a detokenizer)
  bool finished = false;
  FinishReason finish_reason = FinishReason::kNone;
  std::string stop_string;  // the stop string that finished it, if one did
  int64_t n_prompt_tokens = 0;
  int64_t n_output_tokens = 0;  // so far
};

// Steps of one kind: decode-only (every sequence computes one token), mixed (decodes next to
// prefill chunks) or prefill-only. `seconds` is wall time between consecutive readbacks of
// sampled tokens, charged to the step read back: each step's device time while the host keeps
// ahead of the device (async scheduling), else host plus device time.
struct StepKindStats {
  int64_t n_steps = 0;
  int64_t n_tokens = 0;
  double seconds = 0;
};

struct EngineStats {
  size_t n_running = 0;
  size_t n_waiting = 0;
  double kv_usage = 0;
  int64_t prefix_queried_tokens = 0;
  int64_t prefix_hit_tokens = 0;
  int64_t n_preemptions = 0;
  int64_t n_steps = 0;
  double host_seconds = 0;  // scheduling and postprocessing, outside the model runner
  StepKindStats decode_steps, mixed_steps, prefill_steps;
  int64_t n_recomputed_tokens = 0;  // computed again after preemption dropped their KV
  OffloadStats offload;             // the prefix cache's host and disk tiers
  SpecStats spec;                   // speculative decoding (all zero when it is off)
};

class Engine {
 public:
  // detokenizer may be null: then outputs carry no text and stop strings are refused.
  Engine(LoadedModel& model, const Detokenizer* detokenizer,
         std::vector<int32_t> extra_eos_token_ids = {});
  ~Engine();

  // Queues a request; InputError when it cannot be served (empty, too long, bad ids...).
  void add_request(uint64_t request_id, std::vector<int32_t> prompt, const SamplingParams& params,
                   uint64_t cache_salt = 0);
  // Finishes a request with reason abort and frees its blocks now; unknown ids are ignored.
  void abort_request(uint64_t request_id);
  bool has_unfinished() const { return !seqs_.empty(); }
  // One scheduling + model step; outputs of every sequence that produced something.
  std::vector<RequestOutput> step();
  // Outputs of requests aborted since the last step (each finished with reason abort).
  std::vector<RequestOutput> take_aborted();
  EngineStats stats() const;
  size_t n_unfinished() const { return seqs_.size(); }
  // The config's end-of-sequence tokens and the extra ones given at construction.
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }

 private:
  // A sequence with its streaming state.
  struct Tracked {
    Tracked(Sequence seq) : seq(std::move(seq)) {}
    Sequence seq;
    std::unique_ptr<TextStream> text;
    std::unique_ptr<StopChecker> stop;
    bool prompt_logprobs_pending = false;
    std::vector<Logprobs> prompt_logprobs;      // gathered over prefill chunks
    std::unique_ptr<grammar::Matcher> grammar;  // with params.constraint: the output so far
    bool grammar_failed = false;                // a token the grammar refused was sampled
    bool grammar_waiting = false;               // params.constraint_after_token not sampled yet
    SpecSeqState spec;                          // speculative decoding's policy state
  };

  // A launched step whose sampled tokens are not taken yet: the sequence of each row that
  // produces a token (null for prefill chunks and for sequences finished or aborted since).
  struct InFlight {
    std::vector<Sequence*> producers;
    StepKindStats* kind = nullptr;  // where its time is charged
  };

  SchedulerOutput schedule_step();
  // Counts plan in the stats of its kind, which it returns.
  StepKindStats* count_step(const SchedulerOutput& plan);
  // Charges the wall time since the last readback of tokens to `kind`.
  void charge_readback(StepKindStats* kind);
  // Steps of the plan; a verified draft runs as [newest token, draft...] (kept in
  // verify_chunks_ until the next call) with logits for every position.
  std::vector<SequenceStep> build_steps(const SchedulerOutput& plan);
  // Queues plan on the device and records what it will produce (placeholders, n_computed).
  InFlight launch(SchedulerOutput& plan, std::span<const SequenceStep> steps);
  // Takes in_flight's tokens, appends them and reports outputs; finished sequences are
  // listed in `finished` and must leave every plan before they are erased.
  void collect(const InFlight& in_flight, std::vector<RequestOutput>& outputs,
               std::vector<Sequence*>& finished);
  void drop_finished(const std::vector<Sequence*>& finished, SchedulerOutput& plan,
                     InFlight* launched);
  void run_on_host(const SchedulerOutput& plan, std::span<const SequenceStep> steps,
                   std::vector<RequestOutput>& outputs, std::vector<Sequence*>& finished);
  // The output record of a sequence reporting a token; the first token forks its siblings.
  RequestOutput start_output(Tracked& t, bool first_token);
  void validate(const std::vector<int32_t>& prompt, const SamplingParams& params) const;
  Tracked& track(Sequence seq);
  void fork_siblings(Sequence& first);
  // Copies the plan's restored snapshots into their sequences' state slots (before the step),
  // and forks the siblings of a sequence restored at its fork_at.
  void restore_states(const SchedulerOutput& plan);
  // The scheduler's on_step_done, then the state snapshots it asks for (after the step).
  void on_step_done(const SchedulerOutput& plan);
  // Forks the siblings of the plan's sequences that reached their fork_at.
  void fork_at_boundaries(const SchedulerOutput& plan);
  // Whether the sequence's next token may be sampled on the device (nothing the host must see
  // or change first; max_tokens 0, which samples none, finishes on the host).
  bool samples_on_device(const Tracked& t) const;
  int32_t process_and_sample(Tracked& t, std::span<float> logits, RequestOutput& out);
  // Reports seq.tokens.back(), the newest token, and checks whether the sequence is done.
  void report_token(Tracked& t, RequestOutput& out);
  void check_finished(Tracked& t, int32_t token, RequestOutput& out);
  void finish(Tracked& t, FinishReason reason, RequestOutput& out);
  // Speculative decoding (engine/spec_verify.cpp). Sets each running sequence's draft for
  // this step (none when the policy says so); first takes the tokens in flight, which
  // drafting needs.
  void propose_drafts(std::vector<RequestOutput>& outputs, std::vector<Sequence*>& finished);
  bool may_draft(const Tracked& t) const;
  // Samples every row of a verified chunk [newest, draft...] (logits [1 + n_draft, vocab]) as
  // ordinary steps would, token by token, until a sampled token differs from the draft or the
  // sequence finishes; then rolls the KV of rejected drafts back.
  // (n_seqs: the step's sequences, for the policy.)
  void verify_draft(Tracked& t, int64_t n_draft, std::span<float> logits, int64_t n_seqs,
                    RequestOutput& out);
  // Feeds the policy's cost model with a synchronous decode step's wall time.
  void observe_step_cost(const SchedulerOutput& plan, double seconds);
  void collect_prompt_logprobs(Tracked& t, std::span<const float> logits, int64_t row,
                               const SequenceStep& step, int64_t vocab);

  LoadedModel& model_;
  const Detokenizer* detokenizer_;
  std::vector<int32_t> eos_token_ids_;
  Scheduler scheduler_;
  std::map<const Sequence*, std::unique_ptr<Tracked>> seqs_;
  std::vector<RequestOutput> aborted_;
  int64_t n_preemptions_ = 0;
  int64_t n_steps_ = 0;
  double host_seconds_ = 0;
  double runner_seconds_ = 0;  // inside the model runner during step(), excluded from host
  StepKindStats decode_steps_, mixed_steps_, prefill_steps_;
  int64_t n_recomputed_tokens_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_readback_;
  bool async_ = false;
  std::optional<InFlight> in_flight_;
  uint64_t unseeded_counter_ = 0;
  std::unique_ptr<SpecDecoder> spec_;                // null: no speculative decoding
  std::vector<std::vector<int32_t>> verify_chunks_;  // build_steps' chunks of drafts
};

}  // namespace hadron
