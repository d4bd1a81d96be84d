// The JSON an embedder hands the C API: sampling parameters with vLLM's names, validated by
// the HTTP server's code (server/sampling_request), and chat messages in OpenAI's shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/sampling_params.h"
#include "server/sampling_request.h"

namespace hadron::capi {

// A request's sampling before its prompt is known (max_tokens needs the prompt's length).
struct RequestSampling {
  SamplingParams params;
  std::optional<int64_t> max_tokens;  // null in the JSON: up to the context's end
};

// Parses `text` (empty: every default). ApiError (a 4xx) on bad JSON, an unknown name, a wrong
// type or a value out of range.
RequestSampling parse_request_sampling(std::string_view text,
                                       const server::SamplingContext& context);

// The generation budget for a prompt of prompt_len tokens (vLLM's default: 16).
int64_t max_tokens_for(const RequestSampling& sampling, int64_t prompt_len, int64_t max_model_len);

// `text` parsed as JSON within the server's limits (nesting depth, UTF-8); ApiError otherwise.
server::Json parse_json_within_limits(std::string_view text, const server::RequestLimits& limits,
                                      const char* what);

}  // namespace hadron::capi
