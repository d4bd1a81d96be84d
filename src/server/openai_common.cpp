#include "server/openai_common.h"

#include <chrono>
#include <random>

#include "server/api_error.h"
#include "server/sse.h"

namespace hadron::server {

std::string random_id(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}{:016x}", prefix, rng(), rng());
}

int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void check_model(const Fields& fields, const ServedModel& served) {
  const std::optional<std::string> model = fields.string("model");
  if (model && *model != served.name)
    throw ApiError(
        404,
        fmt::format("The model '{}' does not exist; this server serves '{}'", *model, served.name),
        "model", "model_not_found");
}

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

Json finish_reason_json(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return nullptr;
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "stop";
  }
  return nullptr;
}

Json stop_reason_json(const std::string& stop_string) {
  return stop_string.empty() ? Json(nullptr) : Json(stop_string);
}

std::string openai_stream_error(int status, const std::string& message) {
  return sse_data(
             {{"error",
               {{"message", message}, {"type", ApiError(status, "").type()}, {"code", status}}}}) +
         std::string(kSseDone);
}

std::string token_text(const ServedModel& served, int32_t token) {
  if (served.tokenizer == nullptr) return fmt::format("token_id:{}", token);
  const int32_t ids[] = {token};
  return served.tokenizer->decode(ids, /*skip_special_tokens=*/false);
}

namespace {

void start_completion_logprobs(Json& out) {
  if (out.is_null())
    out = {{"tokens", Json::array()},
           {"token_logprobs", Json::array()},
           {"top_logprobs", Json::array()},
           {"text_offset", Json::array()}};
}

}  // namespace

void append_prompt_logprobs(const ServedModel& served, std::span<const int32_t> prompt,
                            const std::vector<Logprobs>& prompt_logprobs, size_t& text_offset,
                            Json& out) {
  start_completion_logprobs(out);
  if (prompt.empty()) return;
  const std::string text = token_text(served, prompt[0]);
  out["tokens"].push_back(text);
  out["token_logprobs"].push_back(nullptr);
  out["top_logprobs"].push_back(nullptr);
  out["text_offset"].push_back(text_offset);
  text_offset += text.size();
  append_completion_logprobs(served, prompt_logprobs, text_offset, out);
}

void append_completion_logprobs(const ServedModel& served, const std::vector<Logprobs>& logprobs,
                                size_t& text_offset, Json& out) {
  start_completion_logprobs(out);
  for (const Logprobs& lp : logprobs) {
    const std::string text = token_text(served, lp.chosen.token);
    out["tokens"].push_back(text);
    out["token_logprobs"].push_back(lp.chosen.logprob);
    // As OpenAI documents for this API: the sampled token is always there, so up to k + 1.
    Json top = Json::object();
    for (const TokenLogprob& t : lp.top) top[token_text(served, t.token)] = t.logprob;
    top[text] = lp.chosen.logprob;
    out["top_logprobs"].push_back(std::move(top));
    out["text_offset"].push_back(text_offset);
    text_offset += text.size();
  }
}

namespace {

Json bytes_of(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

Json chat_token(const ServedModel& served, const TokenLogprob& t) {
  const std::string text = token_text(served, t.token);
  return {{"token", text}, {"logprob", t.logprob}, {"bytes", bytes_of(text)}};
}

}  // namespace

void append_chat_logprobs(const ServedModel& served, const std::vector<Logprobs>& logprobs,
                          Json& content) {
  for (const Logprobs& lp : logprobs) {
    Json entry = chat_token(served, lp.chosen);
    Json top = Json::array();
    for (const TokenLogprob& t : lp.top) top.push_back(chat_token(served, t));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
}

}  // namespace hadron::server
