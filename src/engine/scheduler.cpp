#include "engine/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace hadron {

Scheduler::Scheduler(const SchedulerConfig& config, BlockManager& blocks, StateSlots* state_slots,
                     StateSnapshots* snapshots)
    : config_(config), blocks_(blocks), state_slots_(state_slots), snapshots_(snapshots) {}

void Scheduler::release(Sequence& seq) {
  blocks_.release(seq.blocks);
  seq.blocks.clear();
  if (state_slots_) state_slots_->release(seq.state_slot);
  seq.state_slot = -1;
}

int64_t Scheduler::schedulable(const Sequence& seq) const {
  int64_t n = seq.n_uncomputed();
  if (seq.fork_at >= 0) n = std::min(n, seq.fork_at - seq.n_computed);
  if (!snapshots_on()) return n;
  // Snapshot points inside the prompt, nearest first: a cached prefix without a snapshot (where
  // the next request sharing it may stop matching), then the last block boundary before the
  // prompt's last token (the most a request with the same prompt can reuse: that token is
  // always recomputed). A prompt ending at a boundary is snapshotted there too (on_step_done).
  const int64_t block_size = blocks_.block_size();
  for (const int64_t point :
       {seq.cached_prefix_end, (seq.prompt_len - 1) / block_size * block_size})
    if (point > seq.n_computed && point < seq.prompt_len)
      return std::min(n, point - seq.n_computed);
  return n;
}

int64_t Scheduler::chunk(const Sequence& seq, int64_t budget) const {
  const int64_t wanted = schedulable(seq);
  const int64_t n = std::min(wanted, budget);
  if (n == wanted || !snapshots_on() || seq.n_computed + n >= seq.prompt_len) return n;
  const int64_t block_size = blocks_.block_size();
  const int64_t aligned = (seq.n_computed + n) / block_size * block_size - seq.n_computed;
  return aligned > 0 ? aligned : n;
}

int32_t Scheduler::cut_at_snapshot(Sequence& seq, PrefixMatch& match) {
  auto n_usable = static_cast<int64_t>(match.blocks.size());
  while (n_usable > 0 && !snapshots_->contains(match.hashes[n_usable - 1])) --n_usable;
  // Where the cached KV ends past the last snapshot, snapshot it for the next request that
  // shares this prefix (a system prompt, say).
  seq.cached_prefix_end = match.n_tokens;
  blocks_.trim_prefix(match, n_usable);
  return n_usable > 0 ? *snapshots_->acquire(match.hashes[n_usable - 1]) : -1;
}

bool Scheduler::take_state_slot(Sequence& seq) {
  if (state_slots_ == nullptr || !state_slots_->enabled() || seq.state_slot >= 0) return true;
  const std::optional<int32_t> slot = state_slots_->acquire();
  if (!slot) return false;
  seq.state_slot = *slot;
  return true;
}

void Scheduler::add(Sequence* seq, bool at_front) {
  seq->state = SeqState::kWaiting;
  if (at_front)
    waiting_.push_front(seq);
  else
    waiting_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  std::erase(running_, seq);
  std::erase(waiting_, seq);
  release(*seq);
  seq->state = SeqState::kFinished;
}

int64_t Scheduler::blocks_needed(const Sequence& seq, int64_t n_tokens) const {
  return (seq.n_computed + n_tokens + blocks_.block_size() - 1) / blocks_.block_size() -
         static_cast<int64_t>(seq.blocks.size());
}

bool Scheduler::leaves_growth_room(const Sequence& seq, int64_t n_tokens) const {
  if (config_.reserve_tokens_per_seq <= 0 || running_.empty()) return true;  // progress
  const int64_t per_seq =
      (config_.reserve_tokens_per_seq + blocks_.block_size() - 1) / blocks_.block_size();
  const int64_t left = blocks_.n_free() - std::max<int64_t>(0, blocks_needed(seq, n_tokens));
  return left >= per_seq * (static_cast<int64_t>(running_.size()) + 1);
}

bool Scheduler::reserve(Sequence& seq, int64_t n_tokens) {
  const int64_t needed = blocks_needed(seq, n_tokens);
  if (needed <= 0) return true;
  auto fresh = blocks_.allocate(needed);
  if (!fresh) return false;
  seq.blocks.insert(seq.blocks.end(), fresh->begin(), fresh->end());
  return true;
}

void Scheduler::preempt(Sequence& seq, SchedulerOutput& output, int64_t& budget) {
  auto scheduled = std::find_if(output.seqs.begin(), output.seqs.end(),
                                [&](const ScheduledSeq& s) { return s.seq == &seq; });
  if (scheduled != output.seqs.end()) {
    budget += scheduled->n_tokens + scheduled->n_draft;
    output.seqs.erase(scheduled);
  }
  seq.draft.clear();
  std::erase(running_, &seq);
  release(seq);  // a linear-attention state is recomputed from position 0 with the KV
  seq.n_computed_lost = std::max(seq.n_computed_lost, seq.n_computed);
  seq.n_computed = 0;
  seq.hash_cursor = {};
  ++seq.n_preemptions;
  output.preempted.push_back(&seq);
  add(&seq, /*at_front=*/true);
  seq.state = SeqState::kPreempted;  // waiting again, to be recomputed
}

void Scheduler::schedule_running(SchedulerOutput& output, int64_t& budget) {
  // Decodes first, then sequences still prefilling, each in admission order.
  std::vector<Sequence*> order;
  for (bool decodes : {true, false})
    for (Sequence* seq : running_)
      if ((seq->n_uncomputed() == 1) == decodes) order.push_back(seq);
  for (Sequence* seq : order) {
    if (budget <= 0) break;
    if (seq->state != SeqState::kRunning) continue;  // preempted meanwhile
    const int64_t n = chunk(*seq, budget);
    if (n <= 0) continue;  // waiting for its siblings' fork
    bool preempted_self = false;
    while (!reserve(*seq, n)) {
      Sequence* victim = running_.back();
      preempt(*victim, output, budget);
      if (victim == seq) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) continue;
    output.seqs.push_back({seq, n});
    budget -= n;
  }
}

int64_t Scheduler::reserve_draft(Sequence& seq, int64_t budget) {
  auto n = std::min(static_cast<int64_t>(seq.draft.size()), budget);
  while (n > 0 && blocks_needed(seq, 1 + n) > blocks_.n_free()) --n;
  if (n > 0) HADRON_CHECK(reserve(seq, 1 + n), "{} free blocks vanished", blocks_.n_free());
  seq.draft.resize(std::max<int64_t>(n, 0));
  return n;
}

void Scheduler::schedule_drafts(SchedulerOutput& output, int64_t& budget) {
  // After every running sequence has its own tokens, so drafts only take what is left.
  for (ScheduledSeq& s : output.seqs) {
    if (s.seq->draft.empty()) continue;
    if (s.n_tokens != 1 || s.seq->n_uncomputed() != 1) {
      s.seq->draft.clear();
      continue;
    }
    s.n_draft = reserve_draft(*s.seq, budget);
    budget -= s.n_draft;
  }
}

void Scheduler::admit_waiting(SchedulerOutput& output, int64_t& budget) {
  while (!waiting_.empty() && budget > 0 &&
         static_cast<int64_t>(running_.size()) < config_.max_num_seqs) {
    Sequence* seq = waiting_.front();
    const bool matched_now = seq->blocks.empty();
    int32_t restore = -1;  // the snapshot row the sequence's state starts from
    if (matched_now && seq->use_prefix_cache) {
      // The last token is always recomputed: its logits are needed.
      PrefixMatch match = blocks_.acquire_prefix(seq->tokens, seq->cache_salt,
                                                 static_cast<int64_t>(seq->tokens.size()) - 1);
      if (snapshots_on()) restore = cut_at_snapshot(*seq, match);
      seq->blocks = std::move(match.blocks);
      seq->n_computed = match.n_tokens;
      seq->hash_cursor = match.cursor;
    }
    const int64_t n = chunk(*seq, budget);
    const bool had_slot = seq->state_slot >= 0;  // a forked sibling holds its copied state
    if (!leaves_growth_room(*seq, n) || !take_state_slot(*seq) || !reserve(*seq, n)) {
      if (!had_slot && state_slots_) state_slots_->release(seq->state_slot);
      if (!had_slot) seq->state_slot = -1;
      if (matched_now) {
        blocks_.release(seq->blocks);
        seq->blocks.clear();
        seq->n_computed = 0;
        seq->hash_cursor = {};
      }
      if (restore >= 0) snapshots_->release(restore);
      break;
    }
    if (restore >= 0) output.restores.push_back({seq, restore});
    waiting_.pop_front();
    seq->state = SeqState::kRunning;
    running_.push_back(seq);
    if (n == 0) continue;  // restored at its fork_at: runs once its siblings are forked
    output.seqs.push_back({seq, n});
    budget -= n;
  }
}

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput output;
  int64_t budget = config_.max_num_batched_tokens;
  schedule_running(output, budget);
  schedule_drafts(output, budget);
  if (output.preempted.empty()) admit_waiting(output, budget);
  for (const ScheduledSeq& s : output.seqs) output.n_tokens += s.n_tokens + s.n_draft;
  return output;
}

std::vector<StateCopy> Scheduler::on_step_done(const SchedulerOutput& output) {
  std::vector<StateCopy> snapshots;
  for (const ScheduledSeq& s : output.seqs) {
    Sequence& seq = *s.seq;
    seq.n_computed += s.n_tokens;
    blocks_.cache_full_blocks(seq.blocks, std::span(seq.tokens).first(seq.n_computed),
                              seq.cache_salt, seq.hash_cursor);
    // A prompt's state at a block boundary, keyed by the chain hash of the block ending there
    // (states past the prompt are not kept: the next turn's template drops what follows).
    if (!snapshots_on() || seq.state_slot < 0 || seq.n_computed > seq.prompt_len ||
        seq.hash_cursor.n_hashed * blocks_.block_size() != seq.n_computed)
      continue;
    if (const std::optional<int32_t> row = snapshots_->store(seq.hash_cursor.parent))
      snapshots.push_back({seq.state_slot, *row});
  }
  return snapshots;
}

void Scheduler::accept_draft(Sequence& seq, int64_t n_accepted) {
  seq.n_computed += n_accepted;
  blocks_.cache_full_blocks(seq.blocks, std::span(seq.tokens).first(seq.n_computed), seq.cache_salt,
                            seq.hash_cursor);
  const auto keep = static_cast<size_t>(
      (static_cast<int64_t>(seq.tokens.size()) + blocks_.block_size() - 1) / blocks_.block_size());
  if (seq.blocks.size() > keep) {
    blocks_.release(std::span(seq.blocks).subspan(keep));
    seq.blocks.resize(keep);
  }
}

}  // namespace hadron
