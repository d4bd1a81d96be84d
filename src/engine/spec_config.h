// SpeculativeConfig: --speculative-config, vLLM's JSON object, checked once.
#pragma once

#include <cstdint>
#include <string>

namespace hadron {

enum class SpecMethod : uint8_t { kNgram };

struct SpeculativeConfig {
  SpecMethod method = SpecMethod::kNgram;
  int64_t num_speculative_tokens = 0;  // k: draft tokens verified per step, at most
  // n-gram prompt lookup: the longest suffix of prompt_lookup_max down to prompt_lookup_min
  // tokens found earlier in the sequence proposes the tokens that followed it.
  int64_t prompt_lookup_min = 2;
  int64_t prompt_lookup_max = 5;
  // Speculation is off in steps running more decoding sequences than this.
  int64_t disable_by_batch_size = 16;
  // A sequence drafts only while its acceptance beats what a draft token costs in measured
  // step time (engine/spec_decode.h); not a JSON field (tests turn it off for determinism).
  bool weigh_step_costs = true;
};

inline constexpr int64_t kMaxSpeculativeTokens = 16;

// Parses `json` (a JSON object with vLLM's field names: method, num_speculative_tokens,
// prompt_lookup_min, prompt_lookup_max, disable_by_batch_size); InputError naming the field
// on anything wrong, unknown fields included.
SpeculativeConfig parse_speculative_config(const std::string& json);

}  // namespace hadron
