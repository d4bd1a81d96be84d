// The engine's side of speculative decoding: drafting before a step is scheduled, and
// verification of the drafts' logits after it ran (docs/adr/0010-speculative-decoding.md).
#include <algorithm>

#include "core/error.h"
#include "engine/engine.h"

namespace hadron {

bool Engine::may_draft(const Tracked& t) const {
  const Sequence& seq = t.seq;
  // Structured output would need the grammar's mask at every draft position; prompt
  // logprobs and forks belong to prefill. The newest token may still be in flight.
  return seq.state == SeqState::kRunning && seq.n_uncomputed() == 1 && !t.grammar &&
         !t.prompt_logprobs_pending && seq.fork_at < 0;
}

void Engine::propose_drafts(std::vector<RequestOutput>& outputs, std::vector<Sequence*>& finished) {
  for (auto& [key, tracked] : seqs_) tracked->seq.draft.clear();
  if (!spec_->enabled_for(static_cast<int64_t>(scheduler_.n_running()))) return;
  std::vector<Tracked*> drafting;
  for (auto& [key, tracked] : seqs_)
    if (may_draft(*tracked) && spec_->ready(tracked->spec)) drafting.push_back(tracked.get());
  if (drafting.empty()) return;  // a step in flight stays in flight
  if (in_flight_) {              // drafts continue the newest tokens: take them now
    collect(*in_flight_, outputs, finished);
    in_flight_.reset();
  }
  for (Tracked* t : drafting) {
    Sequence& seq = t->seq;
    if (seq.state != SeqState::kRunning) continue;  // finished with the tokens just taken
    // Accepting j drafts makes j + 1 tokens: within max_tokens and the context.
    const int64_t limit = std::min(
        {spec_->config().num_speculative_tokens, seq.params->max_tokens - seq.n_output() - 1,
         model_.max_model_len() - static_cast<int64_t>(seq.tokens.size())});
    if (limit > 0) seq.draft = spec_->propose(seq.tokens, t->spec, limit);
  }
}

void Engine::verify_draft(Tracked& t, int64_t n_draft, std::span<float> logits, int64_t n_seqs,
                          RequestOutput& out) {
  Sequence& seq = t.seq;
  const int64_t vocab = model_.config().vocab_size;
  HADRON_CHECK(static_cast<int64_t>(logits.size()) == (n_draft + 1) * vocab &&
                   static_cast<int64_t>(seq.draft.size()) >= n_draft,
               "{} logits for a draft of {} tokens (vocabulary {})", logits.size(), n_draft, vocab);
  const std::vector<int32_t> draft(seq.draft.begin(), seq.draft.begin() + n_draft);
  seq.draft.clear();
  // Row i follows the draft's first i tokens; it is sampled exactly as an ordinary step
  // would sample it (penalties over the output so far, the sequence's seed and step), so
  // a draft token is accepted with the target's probability of it, and a rejected one is
  // replaced by a token drawn from the target restricted to the other tokens: the output is
  // distributed, and with a seed equal, as without speculation.
  int64_t n_accepted = 0;
  for (int64_t i = 0; i <= n_draft; ++i) {
    seq.tokens.push_back(process_and_sample(t, logits.subspan(i * vocab, vocab), out));
    report_token(t, out);
    const bool accepted = i < n_draft && seq.tokens.back() == draft[i];
    n_accepted += accepted;
    if (out.finished || !accepted) break;
  }
  spec_->record(t.spec, n_draft, n_accepted, n_seqs);
  if (!out.finished) scheduler_.accept_draft(seq, n_accepted);  // finished: blocks are freed
}

void Engine::observe_step_cost(const SchedulerOutput& plan, double seconds) {
  if (plan.seqs.empty()) return;
  for (const ScheduledSeq& s : plan.seqs)
    if (s.n_tokens != 1) return;  // prefill chunks cost otherwise
  spec_->observe_step(plan.n_tokens, seconds);
}

}  // namespace hadron
