// Per-sequence logits processing before sampling: penalties, logit bias, min_tokens; and
// log-probabilities for the logprobs outputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampling_params.h"

namespace hadron {

// Applies, in place on one row of logits [vocab]:
// - repetition_penalty over tokens seen in prompt or output (positive logits divided,
//   negative multiplied, as transformers and vLLM do);
// - presence and frequency penalties over output tokens (OpenAI);
// - logit_bias;
// - while fewer than min_tokens were generated, end-of-sequence and stop tokens are banned.
void process_logits(std::span<float> logits, const SamplingParams& params,
                    std::span<const int32_t> prompt, std::span<const int32_t> output,
                    std::span<const int32_t> eos_token_ids);

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
};

// log_softmax(logits)[token], and the top `k` entries by value (largest first).
struct Logprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};
Logprobs compute_logprobs(std::span<const float> logits, int32_t token, int k);

}  // namespace hadron
