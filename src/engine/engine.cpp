#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "core/clock.h"
#include "core/error.h"
#include "engine/grammar_constraint.h"

namespace hadron {

Engine::Engine(LoadedModel& model, const Detokenizer* detokenizer,
               std::vector<int32_t> extra_eos_token_ids)
    : model_(model),
      detokenizer_(detokenizer),
      scheduler_({model.options().max_num_seqs, model.options().max_num_batched_tokens,
                  model.options().kv_reserve_per_seq},
                 model.blocks(), &model.state_slots(), &model.snapshots()),
      async_(model.async_scheduling()) {
  for (int64_t id : model.config().eos_token_ids)
    eos_token_ids_.push_back(static_cast<int32_t>(id));
  eos_token_ids_.insert(eos_token_ids_.end(), extra_eos_token_ids.begin(),
                        extra_eos_token_ids.end());
  if (const auto& spec = model.options().speculative) {
    if (model.state_slots().enabled())
      input_error(
          "speculative decoding is not supported yet for models with linear-attention (gated "
          "DeltaNet) layers: rolling their recurrent state back is not implemented");
    spec_ = std::make_unique<SpecDecoder>(*spec);
  }
}

Engine::~Engine() {
  if (in_flight_) model_.runner().take_tokens();  // nothing may stay queued for the next engine
  for (auto& [key, tracked] : seqs_) {
    model_.blocks().release(tracked->seq.blocks);
    model_.state_slots().release(tracked->seq.state_slot);
  }
}

void Engine::validate(const std::vector<int32_t>& prompt, const SamplingParams& p) const {
  const int64_t vocab = model_.config().vocab_size;
  if (prompt.empty()) input_error("the prompt is empty");
  for (int32_t id : prompt)
    if (id < 0 || id >= vocab)
      input_error("token id {} is outside the vocabulary [0, {})", id, vocab);
  if (static_cast<int64_t>(prompt.size()) >= model_.max_model_len())
    input_error("the prompt has {} tokens; this model's context (--max-model-len) is {}",
                prompt.size(), model_.max_model_len());
  const int64_t blocks_needed =
      (model_.max_model_len() + model_.blocks().block_size() - 1) / model_.blocks().block_size();
  HADRON_CHECK(blocks_needed <= model_.blocks().n_blocks(),
               "KV pool of {} blocks cannot hold one sequence of {} tokens",
               model_.blocks().n_blocks(), model_.max_model_len());
  if (p.max_tokens < 0) input_error("max_tokens must be >= 0");
  if (p.min_tokens < 0 || p.min_tokens > p.max_tokens)
    input_error("min_tokens must be in [0, max_tokens]; got {} with max_tokens {}", p.min_tokens,
                p.max_tokens);
  if (p.n < 1) input_error("n must be >= 1");
  if (p.temperature < 0) input_error("temperature must be >= 0");
  if (p.top_p <= 0 || p.top_p > 1) input_error("top_p must be in (0, 1]");
  if (p.top_k < 0) input_error("top_k must be >= 0 (0 disables it)");
  if (p.min_p < 0 || p.min_p > 1) input_error("min_p must be in [0, 1]");
  if (p.repetition_penalty <= 0) input_error("repetition_penalty must be > 0");
  if (!p.stop.empty() && detokenizer_ == nullptr)
    input_error("stop strings need a tokenizer; this engine has none");
  for (const auto& [token, bias] : p.logit_bias)
    if (token < 0 || token >= vocab)
      input_error("logit_bias token {} is outside the vocabulary", token);
  if (p.logprobs > 20 || p.prompt_logprobs > 20) input_error("at most 20 logprobs per token");
}

Engine::Tracked& Engine::track(Sequence seq) {
  auto tracked = std::make_unique<Tracked>(std::move(seq));
  const SamplingParams& p = *tracked->seq.params;
  if (detokenizer_) tracked->text = detokenizer_->start(p.skip_special_tokens);
  tracked->stop = std::make_unique<StopChecker>(p.stop);
  tracked->prompt_logprobs_pending = p.prompt_logprobs >= 0 && tracked->seq.index == 0;
  if (p.constraint) {
    tracked->grammar = std::make_unique<grammar::Matcher>(p.constraint->grammar());
    tracked->grammar_waiting = p.constraint_after_token >= 0;
  }
  Tracked& ref = *tracked;
  seqs_.emplace(&ref.seq, std::move(tracked));
  return ref;
}

void Engine::add_request(uint64_t request_id, std::vector<int32_t> prompt,
                         const SamplingParams& params, uint64_t cache_salt) {
  validate(prompt, params);
  auto shared = std::make_shared<const SamplingParams>(params);
  // Unseeded requests still get a generator of their own.
  const uint64_t seed = params.seed ? *params.seed : std::random_device{}() + unseeded_counter_++;
  Tracked& first = track(Sequence(request_id, 0, std::move(prompt), shared, seed, cache_salt));
  // Prompt logprobs need every prompt position computed, so no cached prefix is reused.
  first.seq.use_prefix_cache = params.prompt_logprobs < 0;
  if (params.n > 1 && model_.state_slots().enabled()) {
    // Siblings start from the first completion's state at the last full block of the prompt.
    const int64_t block_size = model_.blocks().block_size();
    first.seq.fork_at = (first.seq.prompt_len - 1) / block_size * block_size;
    if (first.seq.fork_at == 0) fork_siblings(first.seq);  // nothing to share
  }
  scheduler_.add(&first.seq);
}

void Engine::fork_siblings(Sequence& first) {
  // Siblings share the prompt's full blocks; the partial last block is recomputed per sibling.
  // With linear-attention state the first sequence stopped at the last full block (fork_at)
  // and each sibling gets a copy of its state there (or, with no slot free, recomputes all).
  const int64_t block_size = model_.blocks().block_size();
  const bool with_state = model_.state_slots().enabled();
  const int64_t full_blocks = with_state
                                  ? first.n_computed / block_size
                                  : std::min<int64_t>((first.prompt_len - 1) / block_size,
                                                      static_cast<int64_t>(first.blocks.size()));
  first.fork_at = -1;
  for (int index = 1; index < first.params->n; ++index) {
    const uint64_t seed = first.params->seed ? *first.params->seed + index
                                             : std::random_device{}() + unseeded_counter_++;
    std::vector<int32_t> prompt(first.tokens.begin(), first.tokens.begin() + first.prompt_len);
    Tracked& sibling = track(
        Sequence(first.request_id, index, std::move(prompt), first.params, seed, first.cache_salt));
    int64_t shared_blocks = full_blocks;
    if (with_state && shared_blocks > 0) {
      const std::optional<int32_t> slot = model_.state_slots().acquire();
      if (slot) {
        sibling.seq.state_slot = *slot;
        model_.kv().copy_state(model_.backend(), first.state_slot, *slot);
      } else {
        shared_blocks = 0;
      }
    }
    sibling.seq.blocks.assign(first.blocks.begin(), first.blocks.begin() + shared_blocks);
    model_.blocks().share(sibling.seq.blocks);
    sibling.seq.n_computed = shared_blocks * block_size;
    scheduler_.add(&sibling.seq, /*at_front=*/true);
  }
}

void Engine::restore_states(const SchedulerOutput& plan) {
  for (const StateRestore& restore : plan.restores) {
    Sequence& seq = *restore.seq;
    model_.kv().copy_state(model_.backend(), restore.row, seq.state_slot);
    model_.snapshots().release(restore.row);
    if (seq.fork_at >= 0 && seq.n_computed == seq.fork_at) fork_siblings(seq);
  }
}

void Engine::on_step_done(const SchedulerOutput& plan) {
  for (const StateCopy& copy : scheduler_.on_step_done(plan))
    model_.kv().copy_state(model_.backend(), copy.src, copy.dst);
}

void Engine::fork_at_boundaries(const SchedulerOutput& plan) {
  for (const ScheduledSeq& s : plan.seqs)
    if (s.seq->fork_at >= 0 && s.seq->n_computed == s.seq->fork_at) fork_siblings(*s.seq);
}

void Engine::finish(Tracked& t, FinishReason reason, RequestOutput& out) {
  t.seq.finish_reason = reason;
  out.finished = true;
  out.finish_reason = reason;
  if (t.text && !t.stop->stopped()) out.text += t.stop->push(t.text->finish());
  if (!t.stop->stopped()) out.text += t.stop->flush();
  out.stop_string = t.stop->matched();
  scheduler_.remove(&t.seq);
}

void Engine::check_finished(Tracked& t, int32_t token, RequestOutput& out) {
  const SamplingParams& p = *t.seq.params;
  const bool past_min = t.seq.n_output() > p.min_tokens;
  const bool is_eos =
      std::find(eos_token_ids_.begin(), eos_token_ids_.end(), token) != eos_token_ids_.end();
  const bool is_stop_id =
      std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), token) != p.stop_token_ids.end();
  const bool grammar_done =
      t.grammar && !t.grammar_waiting && (t.grammar_failed || grammar_complete(*t.grammar));
  if (grammar_done ||
      (past_min && (t.stop->stopped() || is_stop_id || (is_eos && !p.ignore_eos)))) {
    finish(t, FinishReason::kStop, out);
  } else if (t.seq.n_output() >= p.max_tokens ||
             static_cast<int64_t>(t.seq.tokens.size()) >= model_.max_model_len()) {
    finish(t, FinishReason::kLength, out);
  }
}

void Engine::report_token(Tracked& t, RequestOutput& out) {
  Sequence& seq = t.seq;
  const SamplingParams& p = *seq.params;
  const int32_t token = seq.tokens.back();
  out.token_ids.push_back(token);
  if (t.text) {
    const std::string piece = t.text->push(token);
    // Stop strings apply only once min_tokens are out.
    out.text += seq.n_output() > p.min_tokens || p.stop.empty() ? t.stop->push(piece) : piece;
  }
  out.n_output_tokens = seq.n_output();
  check_finished(t, token, out);
}

RequestOutput Engine::start_output(Tracked& t, bool first_token) {
  Sequence& seq = t.seq;
  // (Hybrid models fork earlier, from the state at fork_at: fork_at_boundaries.)
  if (seq.index == 0 && first_token && seq.params->n > 1 && !model_.state_slots().enabled())
    fork_siblings(seq);
  RequestOutput out;
  out.request_id = seq.request_id;
  out.index = seq.index;
  out.n_prompt_tokens = seq.prompt_len;
  if (t.prompt_logprobs_pending) {
    out.prompt_logprobs = std::move(t.prompt_logprobs);
    t.prompt_logprobs_pending = false;
  }
  return out;
}

SchedulerOutput Engine::schedule_step() {
  SchedulerOutput plan = scheduler_.schedule();
  n_preemptions_ += static_cast<int64_t>(plan.preempted.size());
  for (Sequence* seq : plan.preempted) seqs_.at(seq)->prompt_logprobs.clear();
  // A sequence whose token in flight reaches its length limit stops there for certain:
  // it runs no further step.
  std::erase_if(plan.seqs, [&](const ScheduledSeq& s) {
    const Sequence& seq = *s.seq;
    return !seq.tokens.empty() && seq.tokens.back() < 0 &&
           (seq.n_output() >= seq.params->max_tokens ||
            static_cast<int64_t>(seq.tokens.size()) >= model_.max_model_len());
  });
  plan.n_tokens = 0;
  for (const ScheduledSeq& s : plan.seqs) {
    plan.n_tokens += s.n_tokens + s.n_draft;
    const int64_t lost = std::min(s.seq->n_computed + s.n_tokens, s.seq->n_computed_lost);
    n_recomputed_tokens_ += std::max<int64_t>(0, lost - s.seq->n_computed);
  }
  return plan;
}

StepKindStats* Engine::count_step(const SchedulerOutput& plan) {
  int64_t n_decodes = 0;
  for (const ScheduledSeq& s : plan.seqs) n_decodes += s.n_tokens == 1;
  StepKindStats* kind = n_decodes == static_cast<int64_t>(plan.seqs.size()) ? &decode_steps_
                        : n_decodes == 0                                    ? &prefill_steps_
                                                                            : &mixed_steps_;
  ++kind->n_steps;
  kind->n_tokens += plan.n_tokens;
  return kind;
}

void Engine::charge_readback(StepKindStats* kind) {
  const auto now = std::chrono::steady_clock::now();
  if (last_readback_ && kind)
    kind->seconds += std::chrono::duration<double>(now - *last_readback_).count();
  last_readback_ = now;
}

std::vector<SequenceStep> Engine::build_steps(const SchedulerOutput& plan) {
  std::vector<SequenceStep> steps;
  verify_chunks_.clear();
  verify_chunks_.reserve(plan.seqs.size());  // no reallocation: steps point into them
  for (const ScheduledSeq& s : plan.seqs) {
    const Tracked& t = *seqs_.at(s.seq);
    const bool all_logits = t.prompt_logprobs_pending && s.seq->n_computed < s.seq->prompt_len;
    std::span<const int32_t> tokens =
        std::span(s.seq->tokens).subspan(s.seq->n_computed, s.n_tokens);
    if (s.n_draft > 0) {
      std::vector<int32_t>& chunk = verify_chunks_.emplace_back(tokens.begin(), tokens.end());
      chunk.insert(chunk.end(), s.seq->draft.begin(), s.seq->draft.begin() + s.n_draft);
      tokens = chunk;
    }
    steps.push_back(
        {tokens, s.seq->n_computed, s.seq->blocks, all_logits || s.n_draft > 0, s.seq->state_slot});
  }
  return steps;
}

Engine::InFlight Engine::launch(SchedulerOutput& plan, std::span<const SequenceStep> steps) {
  std::vector<RowSampling> rows;
  for (const ScheduledSeq& s : plan.seqs) {
    const SamplingParams& p = *s.seq->params;
    // The step counter of the token this row samples (placeholders count as outputs).
    rows.push_back({p, s.seq->sampler.seed(), static_cast<uint64_t>(s.seq->n_output())});
  }
  const auto start = std::chrono::steady_clock::now();
  model_.runner().launch(steps, rows);
  runner_seconds_ += seconds_since(start);
  InFlight launched;
  for (const ScheduledSeq& s : plan.seqs)
    launched.producers.push_back(s.n_tokens == s.seq->n_uncomputed() ? s.seq : nullptr);
  return launched;
}

void Engine::collect(const InFlight& in_flight, std::vector<RequestOutput>& outputs,
                     std::vector<Sequence*>& finished) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int32_t> tokens = model_.runner().take_tokens();
  runner_seconds_ += seconds_since(start);
  charge_readback(in_flight.kind);
  for (size_t row = 0; row < in_flight.producers.size(); ++row) {
    Sequence* seq = in_flight.producers[row];
    if (seq == nullptr) continue;
    HADRON_CHECK(!seq->tokens.empty() && seq->tokens.back() == -static_cast<int32_t>(row) - 1,
                 "row {}: the sequence's newest token is not this row's placeholder", row);
    seq->tokens.back() = tokens[row];
    Tracked& t = *seqs_.at(seq);
    RequestOutput out = start_output(t, seq->n_output() == 1);
    report_token(t, out);
    if (out.finished) finished.push_back(seq);
    outputs.push_back(std::move(out));
  }
}

void Engine::drop_finished(const std::vector<Sequence*>& finished, SchedulerOutput& plan,
                           InFlight* launched) {
  if (finished.empty()) return;
  auto is_finished = [&](const Sequence* seq) {
    return std::find(finished.begin(), finished.end(), seq) != finished.end();
  };
  if (launched)
    for (Sequence*& seq : launched->producers)
      if (seq != nullptr && is_finished(seq)) seq = nullptr;
  std::erase_if(plan.seqs, [&](const ScheduledSeq& s) { return is_finished(s.seq); });
}

void Engine::run_on_host(const SchedulerOutput& plan, std::span<const SequenceStep> steps,
                         std::vector<RequestOutput>& outputs, std::vector<Sequence*>& finished) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<float> logits = model_.runner().step(steps);
  runner_seconds_ += seconds_since(start);
  charge_readback(count_step(plan));
  on_step_done(plan);
  fork_at_boundaries(plan);
  const int64_t vocab = model_.config().vocab_size;
  int64_t row = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    Sequence& seq = *plan.seqs[i].seq;
    Tracked& t = *seqs_.at(&seq);
    const int64_t n_draft = plan.seqs[i].n_draft;
    const int64_t n_rows = steps[i].all_logits ? static_cast<int64_t>(steps[i].tokens.size()) : 1;
    if (steps[i].all_logits && n_draft == 0)
      collect_prompt_logprobs(t, logits, row, steps[i], vocab);
    row += n_rows;
    if (seq.n_uncomputed() > 0) continue;  // a prefill chunk that did not reach the end
    if (seq.params->max_tokens == 0) {     // the prompt alone (its logprobs): no token
      RequestOutput out = start_output(t, /*first_token=*/true);
      finish(t, FinishReason::kLength, out);
      finished.push_back(&seq);
      outputs.push_back(std::move(out));
      continue;
    }
    RequestOutput out = start_output(t, seq.n_output() == 0);
    if (n_draft > 0) {
      verify_draft(t, n_draft, std::span(logits).subspan((row - n_rows) * vocab, n_rows * vocab),
                   static_cast<int64_t>(plan.seqs.size()), out);
    } else {
      seq.tokens.push_back(
          process_and_sample(t, std::span(logits).subspan((row - 1) * vocab, vocab), out));
      report_token(t, out);
    }
    if (out.finished) finished.push_back(&seq);
    outputs.push_back(std::move(out));
  }
}

std::vector<RequestOutput> Engine::step() {
  const auto step_start = std::chrono::steady_clock::now();
  if (!last_readback_) last_readback_ = step_start;
  const double runner_before = runner_seconds_;
  std::vector<RequestOutput> outputs;
  std::vector<Sequence*> finished;
  const bool was_idle = !in_flight_;  // nothing of an earlier step waited on in this one
  if (spec_) propose_drafts(outputs, finished);
  SchedulerOutput plan = schedule_step();
  restore_states(plan);
  // Verified drafts need every position's logits, on the host.
  const bool on_device = std::all_of(plan.seqs.begin(), plan.seqs.end(), [&](const auto& s) {
    return s.n_draft == 0 && samples_on_device(*seqs_.at(s.seq));
  });
  if (spec_) {
    int64_t k = 0;
    for (const ScheduledSeq& s : plan.seqs) k = std::max(k, s.n_draft);
    spec_->set_k_in_use(k);
  }
  const bool overlap = async_ && on_device && !plan.seqs.empty();
  if (in_flight_ && !overlap) {  // this step needs the tokens in flight first
    collect(*in_flight_, outputs, finished);
    in_flight_.reset();
    drop_finished(finished, plan, nullptr);
  }
  if (plan.seqs.empty()) {
    HADRON_CHECK(!outputs.empty() || scheduler_.n_waiting() == 0 || scheduler_.n_running() > 0,
                 "{} waiting sequences but nothing can be scheduled", scheduler_.n_waiting());
  } else if (on_device) {
    const std::vector<SequenceStep> steps = build_steps(plan);
    InFlight launched = launch(plan, steps);
    launched.kind = count_step(plan);
    if (in_flight_) {  // the previous step's tokens, while the device runs this one
      collect(*in_flight_, outputs, finished);
      in_flight_.reset();
      drop_finished(finished, plan, &launched);
    }
    on_step_done(plan);
    fork_at_boundaries(plan);
    for (size_t row = 0; row < launched.producers.size(); ++row)
      if (launched.producers[row] != nullptr)
        launched.producers[row]->tokens.push_back(-static_cast<int32_t>(row) - 1);
    if (overlap)
      in_flight_ = std::move(launched);
    else
      collect(launched, outputs, finished);
  } else {
    run_on_host(plan, build_steps(plan), outputs, finished);
  }
  if (spec_ && was_idle && !in_flight_) observe_step_cost(plan, seconds_since(step_start));
  for (const Sequence* seq : finished) seqs_.erase(seq);
  ++n_steps_;
  host_seconds_ += seconds_since(step_start) - (runner_seconds_ - runner_before);
  return outputs;
}

bool Engine::samples_on_device(const Tracked& t) const {
  const SamplingParams& p = *t.seq.params;
  return p.max_tokens > 0 && p.logprobs < 0 && !t.prompt_logprobs_pending && !t.grammar &&
         p.repetition_penalty == 1.0f && p.presence_penalty == 0.0f &&
         p.frequency_penalty == 0.0f && p.logit_bias.empty() && t.seq.n_output() >= p.min_tokens;
}

int32_t Engine::process_and_sample(Tracked& t, std::span<float> logits, RequestOutput& out) {
  Sequence& seq = t.seq;
  const SamplingParams& p = *seq.params;
  std::vector<float> raw;
  if (p.logprobs >= 0) raw.assign(logits.begin(), logits.end());
  process_logits(logits, p, std::span(seq.tokens).first(seq.prompt_len),
                 std::span(seq.tokens).subspan(seq.prompt_len), eos_token_ids_);
  const bool constrained = t.grammar && !t.grammar_waiting;
  if (constrained) mask_logits(logits, *p.constraint, *t.grammar);
  const int32_t token = seq.sampler.sample(logits, seq.n_output());
  // Refused only when the mask left nothing samplable (say, a logit_bias of -inf on every
  // allowed token): the sequence then ends.
  if (constrained && !p.constraint->vocabulary().accept(*t.grammar, token)) t.grammar_failed = true;
  if (t.grammar_waiting && token == p.constraint_after_token) t.grammar_waiting = false;
  // The next mask is walked on the mask worker while the model runs the next step.
  if (t.grammar && !t.grammar_waiting && !t.grammar_failed) p.constraint->prefetch(*t.grammar);
  if (p.logprobs >= 0) out.logprobs.push_back(compute_logprobs(raw, token, p.logprobs));
  return token;
}

void Engine::collect_prompt_logprobs(Tracked& t, std::span<const float> logits, int64_t row,
                                     const SequenceStep& step, int64_t vocab) {
  const Sequence& seq = t.seq;
  for (size_t j = 0; j < step.tokens.size(); ++j) {
    const int64_t next = step.n_cached + static_cast<int64_t>(j) + 1;  // the token predicted
    if (next >= seq.prompt_len) break;
    t.prompt_logprobs.push_back(compute_logprobs(logits.subspan((row + j) * vocab, vocab),
                                                 seq.tokens[next], seq.params->prompt_logprobs));
  }
}

void Engine::abort_request(uint64_t request_id) {
  for (auto it = seqs_.begin(); it != seqs_.end();) {
    Tracked& t = *it->second;
    if (t.seq.request_id != request_id) {
      ++it;
      continue;
    }
    RequestOutput out;
    out.request_id = request_id;
    out.index = t.seq.index;
    out.n_prompt_tokens = t.seq.prompt_len;
    const bool pending = !t.seq.tokens.empty() && t.seq.tokens.back() < 0;
    out.n_output_tokens = t.seq.n_output() - (pending ? 1 : 0);
    if (in_flight_)  // its token in flight is dropped
      std::replace(in_flight_->producers.begin(), in_flight_->producers.end(), &t.seq,
                   static_cast<Sequence*>(nullptr));
    finish(t, FinishReason::kAbort, out);
    out.text.clear();  // nothing more is streamed to an aborted request
    aborted_.push_back(std::move(out));
    it = seqs_.erase(it);
  }
}

std::vector<RequestOutput> Engine::take_aborted() {
  std::vector<RequestOutput> out;
  out.swap(aborted_);
  return out;
}

EngineStats Engine::stats() const {
  const BlockManager& blocks = model_.blocks();
  EngineStats stats{scheduler_.n_running(),
                    scheduler_.n_waiting(),
                    blocks.usage(),
                    blocks.stats().queried_tokens,
                    blocks.stats().hit_tokens,
                    n_preemptions_,
                    n_steps_,
                    host_seconds_,
                    decode_steps_,
                    mixed_steps_,
                    prefill_steps_,
                    n_recomputed_tokens_,
                    {},
                    spec_ ? spec_->stats() : SpecStats{}};
  if (const KvOffload* offload = model_.offload()) stats.offload = offload->stats();
  return stats;
}

}  // namespace hadron
