#include "server/chat_prompt.h"

#include "core/error.h"
#include "server/api_error.h"

namespace hadron::server {
namespace {

// A message's content: a string, null, or an array of {"type": "text", "text": ...} parts.
Json normalize_content(const Json* content, const std::string& param) {
  if (content == nullptr) return nullptr;
  if (content->is_string()) return *content;
  if (!content->is_array()) bad_request(param, "'{}' must be a string or an array of parts", param);
  std::string text;
  for (const Json& part : *content) {
    const Fields f(part, param);
    const std::optional<std::string> type = f.string("type");
    if (type != "text")
      bad_request(param, "only text content parts are supported; got '{}'", type.value_or(""));
    text += f.string("text").value_or("");
  }
  return text;
}

Json normalize_tool_call(const Json& call, const std::string& param) {
  const Fields f(call, param);
  const Fields function(f.required("function"), param + ".function");
  Json arguments = Json::object();
  if (const std::optional<std::string> text = function.string("arguments")) {
    arguments = Json::parse(*text, nullptr, false);
    if (!arguments.is_object())
      bad_request(param, "'{}.function.arguments' must be a JSON object", param);
  }
  Json out = call;
  out["type"] = "function";
  out["function"]["arguments"] = std::move(arguments);
  const std::optional<std::string> name = function.string("name");
  if (!name) bad_request(param, "'{}.function.name' is required", param);
  return out;
}

}  // namespace

Json openai_messages(const Fields& fields, const RequestLimits& limits) {
  const Json& messages = fields.required("messages");
  if (!messages.is_array()) fields.wrong_type("messages", "an array");
  if (messages.empty()) bad_request("messages", "'messages' must not be empty");
  if (messages.size() > limits.max_messages)
    bad_request("messages", "at most {} messages", limits.max_messages);
  Json out = Json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string param = fmt::format("messages[{}]", i);
    const Fields m(messages[i], param);
    const std::optional<std::string> role = m.string("role");
    if (!role || (*role != "system" && *role != "developer" && *role != "user" &&
                  *role != "assistant" && *role != "tool"))
      bad_request(param + ".role", "'{}.role' must be system, developer, user, assistant or tool",
                  param);
    Json message = messages[i];
    message["content"] = normalize_content(m.get("content"), param + ".content");
    if (const Json* calls = m.get("tool_calls")) {
      if (!calls->is_array()) m.wrong_type("tool_calls", "an array");
      Json normalized = Json::array();
      for (size_t c = 0; c < calls->size(); ++c)
        normalized.push_back(
            normalize_tool_call((*calls)[c], fmt::format("{}.tool_calls[{}]", param, c)));
      message["tool_calls"] = std::move(normalized);
    }
    if (message["content"].is_null() && *role != "assistant")
      bad_request(param + ".content", "'{}.content' is required", param);
    if (message["content"].is_null()) message["content"] = "";
    out.push_back(std::move(message));
  }
  return out;
}

Json openai_tools(const Fields& fields) {
  const Json* tools = fields.get("tools");
  if (tools == nullptr) return nullptr;
  if (!tools->is_array()) fields.wrong_type("tools", "an array");
  for (size_t i = 0; i < tools->size(); ++i) {
    const std::string param = fmt::format("tools[{}]", i);
    const Fields tool((*tools)[i], param);
    if (tool.string("type") != "function")
      bad_request(param, "'{}.type' must be 'function'", param);
    const Fields function(tool.required("function"), param + ".function");
    if (!function.string("name")) bad_request(param, "'{}.function.name' is required", param);
  }
  return tools->empty() ? Json(nullptr) : *tools;
}

ChatInputs openai_chat_inputs(const Fields& fields, const ServedModel& served,
                              const RequestLimits& limits) {
  ChatInputs inputs;
  inputs.messages = openai_messages(fields, limits);
  inputs.tools = openai_tools(fields);
  if (const Json* kwargs = fields.get("chat_template_kwargs")) {
    if (!kwargs->is_object()) fields.wrong_type("chat_template_kwargs", "an object");
    inputs.kwargs = *kwargs;
  }
  inputs.add_generation_prompt = fields.boolean("add_generation_prompt").value_or(true);
  const std::optional<std::string> source = fields.string("chat_template");
  if (!source) return inputs;
  if (!served.trust_request_chat_template)
    bad_request("chat_template",
                "a request's own chat_template is refused: this server renders only its "
                "model's template (start it with --trust-request-chat-template to allow them)");
  try {
    inputs.chat_template = chat::ChatTemplate::parse(*source);
  } catch (const InputError& e) {
    bad_request("chat_template", "'chat_template' is not a valid template: {}", e.what());
  }
  return inputs;
}

std::string render_chat_text(const ServedModel& served, ChatInputs inputs) {
  const chat::ChatTemplate* chat_template =
      inputs.chat_template ? &*inputs.chat_template
                           : (served.chat_template ? &*served.chat_template : nullptr);
  if (chat_template == nullptr)
    bad_request("messages",
                "this model has no chat template; use /v1/completions or start the "
                "server with --chat-template");
  Json context = Json::object();
  if (inputs.kwargs.is_object())
    for (const auto& [key, value] : inputs.kwargs.items()) context[key] = value;
  context["messages"] = std::move(inputs.messages);
  if (!inputs.tools.is_null()) context["tools"] = std::move(inputs.tools);
  context["add_generation_prompt"] = inputs.add_generation_prompt;
  context["bos_token"] = served.bos_token;
  context["eos_token"] = served.eos_token;
  try {
    return chat_template->render(context);
  } catch (const InputError& e) {
    bad_request("messages", "the chat template failed on this conversation: {}", e.what());
  }
}

ChatPrompt render_chat(const ServedModel& served, ChatInputs inputs) {
  const std::string text = render_chat_text(served, std::move(inputs));
  if (served.tokenizer == nullptr) bad_request("messages", "this model has no tokenizer");
  ChatPrompt prompt;
  prompt.ids = served.tokenizer->encode(text, /*add_special_tokens=*/false);
  const size_t open = text.rfind("<think>");
  const size_t close = text.rfind("</think>");
  prompt.starts_in_reasoning =
      open != std::string::npos && (close == std::string::npos || close < open);
  prompt.reasoning_closed =
      close != std::string::npos && (open == std::string::npos || close > open);
  return prompt;
}

}  // namespace hadron::server
