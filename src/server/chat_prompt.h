// Chat requests into prompts: OpenAI messages normalised for chat templates (text parts joined,
// tool-call arguments parsed into objects as templates expect), rendered and tokenized.
#pragma once

#include <optional>
#include <vector>

#include "server/server_context.h"

namespace hadron::server {

struct ChatPrompt {
  std::vector<int32_t> ids;
  bool starts_in_reasoning = false;  // the rendered prompt leaves a <think> open
  bool reasoning_closed = false;     // its last think marker is </think> (thinking is over)
};

// `messages` of an OpenAI request, checked and normalised for the template.
Json openai_messages(const Fields& fields, const RequestLimits& limits);
// `tools` of an OpenAI request, checked ({"type": "function", "function": {"name", ...}}).
Json openai_tools(const Fields& fields);

// What a request gives the chat template.
struct ChatInputs {
  Json messages;
  Json tools;                    // null: none
  Json kwargs = Json::object();  // extra template variables (chat_template_kwargs)
  bool add_generation_prompt = true;
  std::optional<chat::ChatTemplate> chat_template;  // the request's own; else the model's
};

// The OpenAI fields of a chat request (/v1/chat/completions, /tokenize): messages, tools,
// chat_template_kwargs, add_generation_prompt and vLLM's `chat_template`, which is a 400 unless
// the server trusts request templates (--trust-request-chat-template) and it parses.
ChatInputs openai_chat_inputs(const Fields& fields, const ServedModel& served,
                              const RequestLimits& limits);

// Renders the request's template, or the model's, with the inputs, then tokenizes. 400 when the
// template fails on this conversation.
ChatPrompt render_chat(const ServedModel& served, ChatInputs inputs);
// The rendered text alone (the library's apply_chat_template).
std::string render_chat_text(const ServedModel& served, ChatInputs inputs);

}  // namespace hadron::server
