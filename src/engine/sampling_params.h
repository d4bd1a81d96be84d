// Per-request sampling parameters (OpenAI / vLLM semantics).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/sampling.h"

namespace hadron {

namespace grammar {
class TokenMasker;
}

// The token filter (temperature, top_k, top_p, min_p) is the backends' per-row record, so the
// engine hands it to a sampler as it is.
struct SamplingParams : SampleRowParams {
  float repetition_penalty = 1.0f;  // over prompt and output tokens (HF semantics)
  float presence_penalty = 0.0f;    // over output tokens (OpenAI semantics)
  float frequency_penalty = 0.0f;
  std::vector<std::pair<int32_t, float>> logit_bias;
  std::optional<uint64_t> seed;   // reproducible regardless of batch mates
  std::vector<std::string> stop;  // stop strings, excluded from the output
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  int64_t max_tokens = 16;  // 0: the prompt is computed (and scored) and no token made
  int64_t min_tokens = 0;   // stop tokens and strings are ignored before this many
  int n = 1;                // completions sharing the prompt
  int logprobs = -1;        // -1: none; k >= 0: sampled token + top-k
  int prompt_logprobs = -1;
  bool skip_special_tokens = true;
  // Structured output: every completion is a string of this grammar (EOS only once it is
  // whole); such sequences sample on the host.
  std::shared_ptr<const grammar::TokenMasker> constraint;
  // With a constraint and >= 0: the grammar applies only after this token (a reasoning
  // model's end of thinking, e.g. </think>) has been sampled; the output is free before.
  int32_t constraint_after_token = -1;
};

}  // namespace hadron
