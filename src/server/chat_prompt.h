// Chat requests into prompts: OpenAI messages normalised for chat templates (text parts joined,
// tool-call arguments parsed into objects as templates expect), rendered and tokenized.
#pragma once

#include <vector>

#include "server/server_context.h"

namespace hadron::server {

struct ChatPrompt {
  std::vector<int32_t> ids;
  bool starts_in_reasoning = false;  // the rendered prompt leaves a <think> open
};

// `messages` of an OpenAI request, checked and normalised for the template.
Json openai_messages(const Fields& fields, const RequestLimits& limits);
// `tools` of an OpenAI request, checked ({"type": "function", "function": {"name", ...}}).
Json openai_tools(const Fields& fields);

// Renders the model's template with `messages`, `tools` (null: none) and extra variables
// (chat_template_kwargs), then tokenizes. 400 when the template fails on this conversation.
ChatPrompt render_chat(const ServedModel& served, Json messages, Json tools, const Json& kwargs,
                       bool add_generation_prompt);

}  // namespace hadron::server
