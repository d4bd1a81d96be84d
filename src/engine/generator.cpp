#include "engine/generator.h"

#include <algorithm>
#include <chrono>

#include "core/clock.h"
#include "core/error.h"

namespace hadron {

std::vector<GenerationResult> generate(LoadedModel& model,
                                       const std::vector<GenerationRequest>& requests,
                                       const Detokenizer* detokenizer, GenerationStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  Engine engine(model, detokenizer);
  std::vector<GenerationResult> results(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const int n = requests[i].params.n;
    results[i].completions.resize(n);
    results[i].texts.resize(n);
    results[i].finish_reasons.resize(n, FinishReason::kNone);
    engine.add_request(i, requests[i].prompt, requests[i].params);
  }
  GenerationStats local;
  size_t n_started = 0;
  while (engine.has_unfinished()) {
    for (const RequestOutput& out : engine.step()) {
      GenerationResult& result = results[out.request_id];
      auto& tokens = result.completions[out.index];
      if (tokens.empty() && out.index == 0 && ++n_started == requests.size())
        local.first_token_seconds = seconds_since(start);
      tokens.insert(tokens.end(), out.token_ids.begin(), out.token_ids.end());
      result.texts[out.index] += out.text;
      if (out.finished) result.finish_reasons[out.index] = out.finish_reason;
      local.generated_tokens += static_cast<int64_t>(out.token_ids.size());
    }
    ++local.steps;
  }
  if (stats) {
    for (const GenerationRequest& r : requests) local.prompt_tokens += r.prompt.size();
    local.seconds = seconds_since(start);
    local.engine = engine.stats();
    *stats = local;
  }
  return results;
}

std::vector<float> score(LoadedModel& model, const std::vector<int32_t>& tokens) {
  const int64_t vocab = model.config().vocab_size;
  if (tokens.empty()) input_error("nothing to score");
  for (int32_t id : tokens)
    if (id < 0 || id >= vocab) input_error("token id {} outside the vocabulary of {}", id, vocab);
  if (static_cast<int64_t>(tokens.size()) > model.max_model_len())
    input_error("{} tokens exceed the context of {}", tokens.size(), model.max_model_len());
  const int64_t block_size = model.kv().block_size();
  auto blocks = model.blocks().allocate((tokens.size() + block_size - 1) / block_size);
  HADRON_CHECK(blocks.has_value(), "KV pool too small for {} tokens", tokens.size());
  const std::optional<int32_t> slot =
      model.state_slots().enabled() ? model.state_slots().acquire() : std::optional<int32_t>(-1);
  HADRON_CHECK(slot.has_value(), "no free linear-attention state slot");
  std::vector<float> all;
  for (int64_t done = 0; done < static_cast<int64_t>(tokens.size());) {
    const int64_t n = std::min<int64_t>(tokens.size() - done, model.runner().max_tokens());
    const SequenceStep step{std::span(tokens).subspan(done, n), done, *blocks, true, *slot};
    const std::vector<float> logits = model.runner().step({&step, 1});
    all.insert(all.end(), logits.begin(), logits.end());
    done += n;
  }
  model.blocks().release(*blocks);
  model.state_slots().release(*slot);
  return all;
}

}  // namespace hadron
