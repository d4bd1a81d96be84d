// The sampling fields shared by /v1/completions, /v1/chat/completions and /v1/messages, read
// into SamplingParams with OpenAI's names (and vLLM's extras: top_k, min_p,
// repetition_penalty, min_tokens, ignore_eos, stop_token_ids, skip_special_tokens).
#pragma once

#include <optional>
#include <vector>

#include "engine/sampling_params.h"
#include "grammar/grammar_cache.h"
#include "loader/generation_defaults.h"
#include "server/request_fields.h"

namespace hadron::server {

struct SamplingContext {
  const RequestLimits& limits;
  const GenerationDefaults& defaults;  // used where a request leaves a field out
  int32_t vocab_size = 0;
  grammar::GrammarCache* grammars = nullptr;  // null: structured output is refused
};

// Everything but max_tokens and logprobs, whose names and meaning differ per endpoint;
// structured-output fields (server/structured_output.h) included.
SamplingParams parse_sampling(const Fields& fields, const SamplingContext& context);

// The generation budget: `requested` (already range-checked >= 1) or what is left of the
// context; 400 when the prompt leaves no room or prompt + requested exceeds the context.
struct MaxTokensField {
  std::string max_tokens_param;  // the field that asked (max_tokens, max_completion_tokens)
  std::string prompt_param;      // where the prompt came from (prompt, messages)
  bool zero_allowed = false;     // 0 asks for the prompt alone (completions with echo)
};
int64_t resolve_max_tokens(std::optional<int64_t> requested, int64_t prompt_len,
                           int64_t max_model_len, const MaxTokensField& names);

}  // namespace hadron::server
