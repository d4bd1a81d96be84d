// Offline generation and scoring on a LoadedModel: prompts in, token ids out. Used by
// `hadron generate`, `hadron score`, the benchmarks and the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace hadron {

struct GenerationRequest {
  std::vector<int32_t> prompt;
  SamplingParams params;
};

struct GenerationResult {
  std::vector<std::vector<int32_t>> completions;  // params.n of them
  std::vector<std::string> texts;                 // with a detokenizer
  std::vector<FinishReason> finish_reasons;
};

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t steps = 0;
  double seconds = 0;
  double first_token_seconds = 0;  // until every request has its first token
  EngineStats engine;
};

// Runs every request to completion through the engine (continuous batching).
std::vector<GenerationResult> generate(LoadedModel& model,
                                       const std::vector<GenerationRequest>& requests,
                                       const Detokenizer* detokenizer = nullptr,
                                       GenerationStats* stats = nullptr);

// Teacher-forced logits after each position of `tokens`: [n_tokens, vocab] row-major.
std::vector<float> score(LoadedModel& model, const std::vector<int32_t>& tokens);

}  // namespace hadron
