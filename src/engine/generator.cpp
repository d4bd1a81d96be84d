#include "engine/generator.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace hadron {
namespace {

struct Sequence {
  std::vector<int32_t> tokens;  // prompt then generated
  size_t prompt_len = 0;
  int64_t n_cached = 0;         // tokens whose KV is in the cache
  std::vector<int32_t> blocks;
  Sampler sampler;
  const GenerationRequest* request = nullptr;
  GenerationResult result;
  bool done = false;
};

// Reserves blocks for every sequence's whole context up front.
std::vector<Sequence> admit(LoadedModel& model, const std::vector<GenerationRequest>& requests) {
  std::vector<Sequence> seqs;
  seqs.reserve(requests.size());
  const int64_t block_size = model.kv().block_size();
  for (const GenerationRequest& request : requests) {
    const int64_t context = static_cast<int64_t>(request.prompt.size()) + request.max_tokens;
    if (request.prompt.empty()) input_error("empty prompt");
    for (int32_t id : request.prompt)
      if (id < 0 || id >= model.config().vocab_size)
        input_error("token id {} outside the vocabulary of {}", id, model.config().vocab_size);
    if (context > model.max_model_len())
      input_error("prompt ({} tokens) + max_tokens ({}) exceeds the context of {} tokens",
                  request.prompt.size(), request.max_tokens, model.max_model_len());
    auto blocks = model.blocks().allocate((context + block_size - 1) / block_size);
    if (!blocks)
      input_error("the KV cache has no room for {} concurrent sequences of {} tokens",
                  requests.size(), context);
    seqs.push_back({request.prompt, request.prompt.size(), 0, std::move(*blocks),
                    Sampler(request.sampling), &request, {}, false});
  }
  return seqs;
}

// Feeds prompts in chunks of at most the runner's token budget; samples the first token.
void prefill(LoadedModel& model, std::vector<Sequence>& seqs) {
  const int64_t vocab = model.config().vocab_size;
  for (Sequence& seq : seqs) {
    while (seq.n_cached < static_cast<int64_t>(seq.prompt_len)) {
      const int64_t n = std::min<int64_t>(seq.prompt_len - seq.n_cached,
                                          model.runner().max_tokens());
      const SequenceStep step{std::span(seq.tokens).subspan(seq.n_cached, n), seq.n_cached,
                              seq.blocks, false};
      const std::vector<float> logits = model.runner().step({&step, 1});
      seq.n_cached += n;
      if (seq.n_cached == static_cast<int64_t>(seq.prompt_len))
        seq.tokens.push_back(seq.sampler.sample(std::span(logits).first(vocab)));
    }
  }
}

bool finished(Sequence& seq) {
  const int32_t last = seq.tokens.back();
  const auto& stops = seq.request->stop_token_ids;
  const auto generated = static_cast<int64_t>(seq.tokens.size() - seq.prompt_len);
  if (std::find(stops.begin(), stops.end(), last) != stops.end()) {
    seq.result.finish_reason = FinishReason::kStop;
    return true;
  }
  seq.result.finish_reason = FinishReason::kLength;
  return generated >= seq.request->max_tokens;
}

double elapsed(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
  }
  return "unknown";
}

std::vector<GenerationResult> generate(LoadedModel& model,
                                       const std::vector<GenerationRequest>& requests,
                                       GenerationStats* stats) {
  std::vector<Sequence> seqs = admit(model, requests);
  const auto start = std::chrono::steady_clock::now();
  prefill(model, seqs);
  const double prefill_seconds = elapsed(start);
  const int64_t vocab = model.config().vocab_size;
  int64_t decode_steps_tokens = 0;
  for (Sequence& seq : seqs) seq.done = seq.request->max_tokens == 0 || finished(seq);
  while (true) {
    std::vector<SequenceStep> steps;
    std::vector<Sequence*> running;
    for (Sequence& seq : seqs) {
      if (seq.done) continue;
      steps.push_back({std::span(seq.tokens).subspan(seq.n_cached, 1), seq.n_cached,
                       seq.blocks, false});
      running.push_back(&seq);
    }
    if (steps.empty()) break;
    const std::vector<float> logits = model.runner().step(steps);
    decode_steps_tokens += static_cast<int64_t>(steps.size());
    for (size_t i = 0; i < running.size(); ++i) {
      Sequence& seq = *running[i];
      ++seq.n_cached;
      seq.tokens.push_back(seq.sampler.sample(std::span(logits).subspan(i * vocab, vocab)));
      seq.done = finished(seq);
    }
  }
  std::vector<GenerationResult> results;
  for (Sequence& seq : seqs) {
    model.blocks().release(seq.blocks);
    seq.result.tokens.assign(seq.tokens.begin() + seq.prompt_len, seq.tokens.end());
    if (seq.request->max_tokens == 0) seq.result.tokens.clear();
    results.push_back(std::move(seq.result));
  }
  if (stats) {
    for (const GenerationRequest& r : requests) stats->prompt_tokens += r.prompt.size();
    stats->generated_tokens = decode_steps_tokens + static_cast<int64_t>(requests.size());
    stats->prefill_seconds = prefill_seconds;
    stats->decode_seconds = elapsed(start) - prefill_seconds;
  }
  return results;
}

std::vector<float> score(LoadedModel& model, const std::vector<int32_t>& tokens) {
  const std::vector<GenerationRequest> requests{{tokens, 0, {}, {}}};
  std::vector<Sequence> seqs = admit(model, requests);
  Sequence& seq = seqs[0];
  std::vector<float> all;
  while (seq.n_cached < static_cast<int64_t>(tokens.size())) {
    const int64_t n = std::min<int64_t>(tokens.size() - seq.n_cached, model.runner().max_tokens());
    const SequenceStep step{std::span(tokens).subspan(seq.n_cached, n), seq.n_cached,
                            seq.blocks, true};
    const std::vector<float> logits = model.runner().step({&step, 1});
    all.insert(all.end(), logits.begin(), logits.end());
    seq.n_cached += n;
  }
  model.blocks().release(seq.blocks);
  return all;
}

}  // namespace hadron
