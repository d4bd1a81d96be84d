#include "engine/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace hadron {

Scheduler::Scheduler(const SchedulerConfig& config, BlockManager& blocks, StateSlots* state_slots)
    : config_(config), blocks_(blocks), state_slots_(state_slots) {}

void Scheduler::release(Sequence& seq) {
  blocks_.release(seq.blocks);
  seq.blocks.clear();
  if (state_slots_) state_slots_->release(seq.state_slot);
  seq.state_slot = -1;
}

int64_t Scheduler::schedulable(const Sequence& seq) {
  return seq.fork_at >= 0 ? std::min(seq.n_uncomputed(), seq.fork_at - seq.n_computed)
                          : seq.n_uncomputed();
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
    const int64_t n = std::min(schedulable(*seq), budget);
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
    if (matched_now && seq->use_prefix_cache) {
      // The last token is always recomputed: its logits are needed.
      PrefixMatch match = blocks_.acquire_prefix(seq->tokens, seq->cache_salt,
                                                 static_cast<int64_t>(seq->tokens.size()) - 1);
      seq->blocks = std::move(match.blocks);
      seq->n_computed = match.n_tokens;
      seq->hash_cursor = match.cursor;
    }
    const int64_t n = std::min(schedulable(*seq), budget);
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
      break;
    }
    waiting_.pop_front();
    seq->state = SeqState::kRunning;
    running_.push_back(seq);
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

void Scheduler::on_step_done(const SchedulerOutput& output) {
  for (const ScheduledSeq& s : output.seqs) {
    s.seq->n_computed += s.n_tokens;
    blocks_.cache_full_blocks(s.seq->blocks, std::span(s.seq->tokens).first(s.seq->n_computed),
                              s.seq->cache_salt, s.seq->hash_cursor);
  }
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
