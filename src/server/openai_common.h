// Pieces of OpenAI's response shapes shared by the completion endpoints.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "server/server_context.h"

namespace hadron::server {

// "<prefix><32 hex digits>", unique per call.
std::string random_id(std::string_view prefix);
int64_t unix_time();

// 404 unless `model` is absent or names the served model.
void check_model(const Fields& fields, const ServedModel& served);

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens);
// null, or OpenAI's finish reason (stop, length; an abort reads as stop).
Json finish_reason_json(FinishReason reason);

// vLLM's `stop_reason`: the stop string that ended a choice, else null.
Json stop_reason_json(const std::string& stop_string);

// The SSE event that reports an error once a stream has started, then [DONE].
std::string openai_stream_error(int status, const std::string& message);

// The text of one token as the logprobs arrays show it.
std::string token_text(const ServedModel& served, int32_t token);

// /v1/completions logprobs: {tokens, token_logprobs, top_logprobs, text_offset}, appended to.
void append_completion_logprobs(const ServedModel& served, const std::vector<Logprobs>& logprobs,
                                size_t& text_offset, Json& out);
// The same for an echoed prompt (echo with logprobs): its first token with null logprobs, as
// nothing predicts it, then prompt_logprobs (the engine's, one per later prompt token).
void append_prompt_logprobs(const ServedModel& served, std::span<const int32_t> prompt,
                            const std::vector<Logprobs>& prompt_logprobs, size_t& text_offset,
                            Json& out);
// /v1/chat/completions logprobs.content entries, appended to `content`.
void append_chat_logprobs(const ServedModel& served, const std::vector<Logprobs>& logprobs,
                          Json& content);

}  // namespace hadron::server
