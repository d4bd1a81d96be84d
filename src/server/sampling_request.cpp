#include "server/sampling_request.h"

#include <charconv>

#include "server/api_error.h"
#include "server/structured_output.h"

namespace hadron::server {
namespace {

std::vector<std::string> parse_stop(const Fields& fields, const RequestLimits& limits) {
  const Json* stop = fields.get("stop");
  if (stop == nullptr) return {};
  std::vector<std::string> out;
  if (stop->is_string()) {
    out.push_back(stop->get<std::string>());
  } else if (stop->is_array()) {
    for (const Json& s : *stop) {
      if (!s.is_string()) fields.wrong_type("stop", "a string or an array of strings");
      out.push_back(s.get<std::string>());
    }
  } else {
    fields.wrong_type("stop", "a string or an array of strings");
  }
  if (out.size() > limits.max_stop) bad_request("stop", "at most {} stop strings", limits.max_stop);
  for (const std::string& s : out) {
    if (s.empty()) bad_request("stop", "stop strings must not be empty");
    if (s.size() > limits.max_stop_bytes)
      bad_request("stop", "stop strings are limited to {} bytes", limits.max_stop_bytes);
  }
  return out;
}

std::vector<std::pair<int32_t, float>> parse_logit_bias(const Fields& fields,
                                                        const SamplingContext& context) {
  const Json* bias = fields.get("logit_bias");
  if (bias == nullptr) return {};
  if (!bias->is_object()) fields.wrong_type("logit_bias", "an object of token id -> bias");
  if (bias->size() > context.limits.max_logit_bias)
    bad_request("logit_bias", "at most {} logit_bias entries", context.limits.max_logit_bias);
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : bias->items()) {
    int64_t token = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), token);
    if (ec != std::errc() || end != key.data() + key.size() || token < 0 ||
        token >= context.vocab_size)
      bad_request("logit_bias", "logit_bias key '{}' is not a token id in [0, {})", key,
                  context.vocab_size);
    if (!value.is_number()) fields.wrong_type("logit_bias", "an object of token id -> number");
    check_range("logit_bias", value.get<double>(), -100, 100);
    out.emplace_back(static_cast<int32_t>(token), value.get<float>());
  }
  return out;
}

std::vector<int32_t> parse_stop_token_ids(const Fields& fields, const SamplingContext& context) {
  const Json* ids = fields.get("stop_token_ids");
  if (ids == nullptr) return {};
  if (!ids->is_array()) fields.wrong_type("stop_token_ids", "an array of token ids");
  if (ids->size() > context.limits.max_stop_token_ids)
    bad_request("stop_token_ids", "at most {} stop_token_ids", context.limits.max_stop_token_ids);
  std::vector<int32_t> out;
  for (const Json& id : *ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= context.vocab_size)
      bad_request("stop_token_ids", "stop_token_ids must be token ids in [0, {})",
                  context.vocab_size);
    out.push_back(id.get<int32_t>());
  }
  return out;
}

void refuse_unsupported(const Fields& fields) {
  if (fields.get("suffix") != nullptr) bad_request("suffix", "suffix is not supported");
}

}  // namespace

SamplingParams parse_sampling(const Fields& f, const SamplingContext& context) {
  refuse_unsupported(f);
  SamplingParams p;
  const GenerationDefaults& d = context.defaults;
  p.temperature =
      static_cast<float>(f.number("temperature").value_or(d.temperature.value_or(1.0f)));
  check_range(f.param("temperature"), p.temperature, 0, 2);
  p.top_p = static_cast<float>(f.number("top_p").value_or(d.top_p.value_or(1.0f)));
  if (p.top_p <= 0 || p.top_p > 1) bad_request(f.param("top_p"), "'top_p' must be in (0, 1]");
  const int64_t top_k = f.integer("top_k").value_or(d.top_k.value_or(0));
  if (top_k < -1 || top_k > context.vocab_size)
    bad_request(f.param("top_k"), "'top_k' must be -1, 0 (off) or at most the vocabulary size");
  p.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);
  p.min_p = static_cast<float>(f.number("min_p").value_or(0));
  check_range(f.param("min_p"), p.min_p, 0, 1);
  p.presence_penalty = static_cast<float>(f.number("presence_penalty").value_or(0));
  check_range(f.param("presence_penalty"), p.presence_penalty, -2, 2);
  p.frequency_penalty = static_cast<float>(f.number("frequency_penalty").value_or(0));
  check_range(f.param("frequency_penalty"), p.frequency_penalty, -2, 2);
  p.repetition_penalty = static_cast<float>(f.number("repetition_penalty").value_or(1));
  if (p.repetition_penalty <= 0 || p.repetition_penalty > 10)
    bad_request(f.param("repetition_penalty"), "'repetition_penalty' must be in (0, 10]");
  if (std::optional<int64_t> seed = f.integer("seed")) p.seed = static_cast<uint64_t>(*seed);
  const int64_t n = f.integer("n").value_or(1);
  if (n < 1 || n > context.limits.max_n)
    bad_request(f.param("n"), "'n' must be in [1, {}]", context.limits.max_n);
  p.n = static_cast<int>(n);
  if (std::optional<int64_t> best_of = f.integer("best_of"); best_of && *best_of != n)
    bad_request(f.param("best_of"), "best_of other than n is not supported");
  p.stop = parse_stop(f, context.limits);
  p.stop_token_ids = parse_stop_token_ids(f, context);
  p.logit_bias = parse_logit_bias(f, context);
  p.ignore_eos = f.boolean("ignore_eos").value_or(false);
  p.min_tokens = f.integer("min_tokens").value_or(0);
  if (p.min_tokens < 0) bad_request(f.param("min_tokens"), "'min_tokens' must be >= 0");
  p.skip_special_tokens = f.boolean("skip_special_tokens").value_or(true);
  p.constraint = parse_structured_output(f, context.grammars);
  return p;
}

int64_t resolve_max_tokens(std::optional<int64_t> requested, int64_t prompt_len,
                           int64_t max_model_len, const MaxTokensField& names) {
  const std::string& param = names.max_tokens_param;
  if (prompt_len >= max_model_len)
    bad_request(names.prompt_param,
                "this model's maximum context length is {} tokens; the prompt has {}",
                max_model_len, prompt_len);
  if (!requested) return max_model_len - prompt_len;
  if (*requested < (names.zero_allowed ? 0 : 1))
    bad_request(param, "'{}' must be >= {}", param, names.zero_allowed ? 0 : 1);
  if (prompt_len + *requested > max_model_len)
    bad_request(param,
                "this model's maximum context length is {} tokens; the prompt has {} and {} asks "
                "for {} more",
                max_model_len, prompt_len, param, *requested);
  return *requested;
}

}  // namespace hadron::server
