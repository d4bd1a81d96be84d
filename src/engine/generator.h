// Offline generation and scoring on a LoadedModel: prompts in, token ids out.
// (The continuous-batching scheduler builds on the same runner; this is the simple path
// used by `hadron generate` and `hadron score`.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/loaded_model.h"
#include "engine/sampler.h"

namespace hadron {

struct GenerationRequest {
  std::vector<int32_t> prompt;
  int64_t max_tokens = 16;
  SamplingParams sampling;
  std::vector<int64_t> stop_token_ids;  // generation ends after emitting one of these
};

enum class FinishReason : uint8_t { kStop, kLength };

struct GenerationResult {
  std::vector<int32_t> tokens;
  FinishReason finish_reason = FinishReason::kLength;
};

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
};

// Runs all requests to completion as one batch: chunked prefill, then batched decode steps.
// Throws InputError when a request does not fit the context or the KV pool.
std::vector<GenerationResult> generate(LoadedModel& model,
                                       const std::vector<GenerationRequest>& requests,
                                       GenerationStats* stats = nullptr);

// Teacher-forced logits after each position of `tokens`: [n_tokens, vocab] row-major.
std::vector<float> score(LoadedModel& model, const std::vector<int32_t>& tokens);

const char* finish_reason_name(FinishReason reason);

}  // namespace hadron
