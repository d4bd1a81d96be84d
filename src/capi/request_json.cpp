#include "capi/request_json.h"

#include <algorithm>
#include <array>

#include "server/api_error.h"

namespace hadron::capi {
namespace {

constexpr int64_t kDefaultMaxTokens = 16;  // vLLM's SamplingParams

// Every name parse_sampling reads, and those read here.
constexpr std::array kKnownNames = {"n",
                                    "temperature",
                                    "top_p",
                                    "top_k",
                                    "min_p",
                                    "seed",
                                    "max_tokens",
                                    "min_tokens",
                                    "stop",
                                    "stop_token_ids",
                                    "ignore_eos",
                                    "logprobs",
                                    "logit_bias",
                                    "presence_penalty",
                                    "frequency_penalty",
                                    "repetition_penalty",
                                    "skip_special_tokens",
                                    "best_of"};

void refuse_unknown(const server::Json& body) {
  for (const auto& [name, value] : body.items()) {
    if (std::find(kKnownNames.begin(), kKnownNames.end(), name) != kKnownNames.end()) continue;
    std::string known;
    for (const char* k : kKnownNames) known += known.empty() ? k : std::string(", ") + k;
    server::bad_request(name, "unknown sampling parameter '{}'; known: {}", name, known);
  }
}

}  // namespace

server::Json parse_json_within_limits(std::string_view text, const server::RequestLimits& limits,
                                      const char* what) {
  bool too_deep = false;
  const server::Json::parser_callback_t bound_depth = [&](int depth, server::Json::parse_event_t,
                                                          server::Json&) {
    if (depth > limits.max_json_depth) too_deep = true;
    return !too_deep;
  };
  try {
    server::Json json = server::Json::parse(text, bound_depth);
    if (too_deep) server::bad_request(what, "{} nests deeper than {}", what, limits.max_json_depth);
    return json;
  } catch (const server::Json::exception& e) {
    server::bad_request(what, "{} is not valid JSON: {}", what, e.what());
  }
}

RequestSampling parse_request_sampling(std::string_view text,
                                       const server::SamplingContext& context) {
  const server::Json body =
      text.empty() ? server::Json::object()
                   : parse_json_within_limits(text, context.limits, "sampling parameters");
  if (!body.is_object())
    server::bad_request("sampling", "sampling parameters must be a JSON object");
  const server::Fields fields(body);
  refuse_unknown(body);
  RequestSampling out;
  out.params = server::parse_sampling(fields, context);
  const bool unlimited = body.contains("max_tokens") && body["max_tokens"].is_null();
  if (!unlimited) out.max_tokens = fields.integer("max_tokens").value_or(kDefaultMaxTokens);
  if (const std::optional<int64_t> k = fields.integer("logprobs")) {
    server::check_range("logprobs", static_cast<double>(*k), 0, context.limits.max_logprobs);
    out.params.logprobs = static_cast<int>(*k);
  }
  return out;
}

int64_t max_tokens_for(const RequestSampling& sampling, int64_t prompt_len, int64_t max_model_len) {
  return server::resolve_max_tokens(sampling.max_tokens, prompt_len, max_model_len,
                                    {"max_tokens", "prompt", /*zero_allowed=*/false});
}

}  // namespace hadron::capi
