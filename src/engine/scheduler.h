// Scheduler: which sequences run in the next step and how many tokens each.
//
// Each step has a token budget (--max-num-batched-tokens). Running sequences come first,
// decodes before chunked prefills; waiting sequences are admitted after, in arrival order,
// while the budget, --max-num-seqs and free KV blocks allow, reusing cached prefix blocks.
// When blocks run out the most recently admitted running sequence is preempted: its blocks
// are released and it returns to the front of the queue to be recomputed later. Optionally
// (reserve_tokens_per_seq) a waiting sequence is admitted only while room for that many more
// tokens per running sequence stays free, so long outputs grow without preemption. Models with
// linear-attention layers also need a free state slot to admit a sequence; a preempted or
// removed sequence gives its slot back. With state snapshots (hybrid prefix caching, ADR 0011)
// a cached prefix is cut at its longest block boundary with a snapshot, which the step copies
// into the sequence's slot first (SchedulerOutput::restores), and a prefill chunk ends at block
// boundaries worth a snapshot (the prompt's last, a cached prefix's end, a budget cut).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/sequence.h"
#include "kv/block_manager.h"
#include "kv/state_slots.h"
#include "kv/state_snapshots.h"

namespace hadron {

// The defaults of --max-num-seqs (vLLM's) and --max-num-batched-tokens, for every device.
inline constexpr int64_t kDefaultMaxNumSeqs = 256;
inline constexpr int64_t kDefaultMaxNumBatchedTokens = 8192;

struct SchedulerConfig {
  int64_t max_num_seqs = kDefaultMaxNumSeqs;
  int64_t max_num_batched_tokens = kDefaultMaxNumBatchedTokens;
  // Admission keeps this many tokens of free KV blocks per running sequence (the new one
  // included); 0: admit while blocks last.
  int64_t reserve_tokens_per_seq = 0;
};

struct ScheduledSeq {
  Sequence* seq;
  int64_t n_tokens;     // tokens [n_computed, n_computed + n_tokens) run this step
  int64_t n_draft = 0;  // then seq->draft's first n_draft tokens, to verify (n_tokens is 1)
};

// A sequence admitted on a cached prefix whose state starts from a snapshot.
struct StateRestore {
  Sequence* seq;
  int32_t row;  // the snapshot's row (StateSnapshots)
};

struct SchedulerOutput {
  std::vector<ScheduledSeq> seqs;
  std::vector<Sequence*> preempted;
  int64_t n_tokens = 0;  // draft tokens included
  // Snapshots to copy into admitted sequences' slots before the step runs; each row holds a
  // reference to release once copied. A sequence restored at its fork_at runs no token this
  // step (it is not in `seqs`): its siblings fork first.
  std::vector<StateRestore> restores;
};

class Scheduler {
 public:
  // state_slots: null, or disabled, for models without linear-attention state; snapshots:
  // null, or disabled, without hybrid prefix caching.
  Scheduler(const SchedulerConfig& config, BlockManager& blocks, StateSlots* state_slots = nullptr,
            StateSnapshots* snapshots = nullptr);

  // Queues a sequence (state kWaiting). Sequences with blocks already (forked siblings)
  // keep them.
  void add(Sequence* seq, bool at_front = false);
  // Drops a sequence wherever it is and releases its blocks and state slot now.
  void remove(Sequence* seq);
  SchedulerOutput schedule();
  // After the step ran: advances n_computed and registers newly full blocks for reuse
  // (draft tokens are not counted: see accept_draft). Returns the state copies (slot ->
  // snapshot row) that snapshot the sequences now at a block boundary of their prompt, to run
  // after the step.
  std::vector<StateCopy> on_step_done(const SchedulerOutput& output);
  // After verification appended n_accepted draft tokens and one more to seq.tokens: their KV,
  // written by the step, counts as computed; blocks wholly past the sequence's tokens (rejected
  // drafts' KV only) are freed. Rejected drafts' KV in a kept block is overwritten later.
  void accept_draft(Sequence& seq, int64_t n_accepted);

  size_t n_running() const { return running_.size(); }
  size_t n_waiting() const { return waiting_.size(); }

 private:
  // Blocks for seq.draft too, if they are free (a draft never preempts); trims seq.draft to
  // what fits in `budget` and the blocks. Returns the draft tokens scheduled.
  int64_t reserve_draft(Sequence& seq, int64_t budget);
  // Ensures seq's blocks cover n_computed + n_tokens tokens; false if blocks ran out.
  bool reserve(Sequence& seq, int64_t n_tokens);
  // Blocks seq needs beyond its own to cover n_computed + n_tokens tokens.
  int64_t blocks_needed(const Sequence& seq, int64_t n_tokens) const;
  // Whether admitting seq for n_tokens leaves reserve_tokens_per_seq per running sequence.
  bool leaves_growth_room(const Sequence& seq, int64_t n_tokens) const;
  void preempt(Sequence& seq, SchedulerOutput& output, int64_t& budget);
  // Gives back seq's blocks and state slot.
  void release(Sequence& seq);
  // Takes a state slot for seq when the model keeps state; false when none is free.
  bool take_state_slot(Sequence& seq);
  // Tokens seq may run now: its uncomputed ones, up to its fork_at and its next snapshot point.
  int64_t schedulable(const Sequence& seq) const;
  // Tokens seq runs with `budget` left: a prefill chunk cut by the budget ends at a block
  // boundary when snapshots are kept.
  int64_t chunk(const Sequence& seq, int64_t budget) const;
  bool snapshots_on() const { return snapshots_ != nullptr && snapshots_->enabled(); }
  // Admission with snapshots: cuts match at its longest boundary with a snapshot and
  // returns that snapshot's row (referenced), or -1.
  int32_t cut_at_snapshot(Sequence& seq, PrefixMatch& match);
  void schedule_running(SchedulerOutput& output, int64_t& budget);
  // Adds the drafts of scheduled decodes that budget and free blocks allow.
  void schedule_drafts(SchedulerOutput& output, int64_t& budget);
  void admit_waiting(SchedulerOutput& output, int64_t& budget);

  SchedulerConfig config_;
  BlockManager& blocks_;
  StateSlots* state_slots_;
  StateSnapshots* snapshots_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // admission order
};

}  // namespace hadron
