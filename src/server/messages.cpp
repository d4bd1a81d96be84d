// POST /v1/messages: Anthropic's Messages API over the same chat template and parsers.
#include <memory>

#include "server/api_error.h"
#include "server/chat_output.h"
#include "server/chat_prompt.h"
#include "server/generation.h"
#include "server/handlers.h"
#include "server/openai_common.h"
#include "server/sse.h"
#include "server/structured_output.h"

namespace hadron::server {
namespace {

// An Anthropic content block list (or string) as template messages: text joined into one
// message; tool_use blocks become tool_calls; tool_result blocks become "tool" messages.
void append_turn(const std::string& role, const Json& content, const std::string& param,
                 Json& out) {
  if (content.is_string()) {
    out.push_back({{"role", role}, {"content", content}});
    return;
  }
  if (!content.is_array()) bad_request(param, "'{}' must be a string or an array of blocks", param);
  Json message = {{"role", role}, {"content", ""}};
  Json calls = Json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string block_param = fmt::format("{}[{}]", param, i);
    const Fields b(content[i], block_param);
    const std::string type = b.string("type").value_or("");
    if (type == "text") {
      message["content"] = message["content"].get<std::string>() + b.string("text").value_or("");
    } else if (type == "tool_use" && role == "assistant") {
      const Json input = b.get("input") ? *b.get("input") : Json::object();
      calls.push_back(
          {{"id", b.string("id").value_or("")},
           {"type", "function"},
           {"function", {{"name", b.string("name").value_or("")}, {"arguments", input}}}});
    } else if (type == "tool_result" && role == "user") {
      Json result;
      append_turn("tool", b.get("content") ? *b.get("content") : Json(""), block_param + ".content",
                  result);
      result[0]["tool_call_id"] = b.string("tool_use_id").value_or("");
      out.push_back(result[0]);
    } else if (type != "thinking" && type != "redacted_thinking") {
      bad_request(block_param, "content blocks of type '{}' are not supported here", type);
    }
  }
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  if (!message["content"].get<std::string>().empty() || message.contains("tool_calls"))
    out.push_back(std::move(message));
}

Json anthropic_messages(const Fields& f, const RequestLimits& limits) {
  Json out = Json::array();
  if (const Json* system = f.get("system")) append_turn("system", *system, "system", out);
  const Json& messages = f.required("messages");
  if (!messages.is_array() || messages.empty())
    bad_request("messages", "'messages' must be a non-empty array");
  if (messages.size() > limits.max_messages)
    bad_request("messages", "at most {} messages", limits.max_messages);
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string param = fmt::format("messages[{}]", i);
    const Fields m(messages[i], param);
    const std::string role = m.string("role").value_or("");
    if (role != "user" && role != "assistant")
      bad_request(param + ".role", "role must be user or assistant");
    append_turn(role, m.required("content"), param + ".content", out);
  }
  return out;
}

Json anthropic_tools(const Fields& f) {
  const Json* tools = f.get("tools");
  if (tools == nullptr || (tools->is_array() && tools->empty())) return nullptr;
  if (!tools->is_array()) f.wrong_type("tools", "an array");
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Fields t((*tools)[i], fmt::format("tools[{}]", i));
    const std::optional<std::string> name = t.string("name");
    if (!name) bad_request(fmt::format("tools[{}].name", i), "every tool needs a name");
    Json function = {{"name", *name}};
    if (std::optional<std::string> d = t.string("description")) function["description"] = *d;
    function["parameters"] = t.get("input_schema") ? *t.get("input_schema") : Json::object();
    out.push_back({{"type", "function"}, {"function", function}});
  }
  return out;
}

// Anthropic's tool_choice in OpenAI's terms: auto and none as they are, any as required, a
// tool as a named function; null when absent.
Json openai_tool_choice(const Fields& f) {
  const Json* choice = f.get("tool_choice");
  if (choice == nullptr) return nullptr;
  if (!choice->is_object()) f.wrong_type("tool_choice", "an object");
  const Fields c(*choice, "tool_choice");
  const std::string type = c.string("type").value_or("");
  if (type == "auto" || type == "none") return type;
  if (type == "any") return "required";
  if (type != "tool")
    bad_request("tool_choice.type", "tool_choice type must be auto, any, tool or none");
  const std::optional<std::string> name = c.string("name");
  if (!name) bad_request("tool_choice.name", "tool_choice of type tool needs the tool's name");
  return Json{{"type", "function"}, {"function", {{"name", *name}}}};
}

struct MessagesRequest {
  ChatPrompt prompt;
  SamplingParams params;
  bool tools_offered = false;
  bool stream = false;
};

MessagesRequest parse_messages_request(const Json& body, ServerContext& context) {
  const Fields f(body);
  const ServedModel& served = context.model;
  check_model(f, served);
  MessagesRequest r;
  ChatInputs inputs;
  inputs.tools = anthropic_tools(f);
  inputs.messages = anthropic_messages(f, context.limits);
  r.tools_offered = !inputs.tools.is_null();
  const Json tools = inputs.tools;
  if (const Json* thinking = f.get("thinking"))
    inputs.kwargs["enable_thinking"] = Fields(*thinking, "thinking").string("type") == "enabled";
  r.prompt = render_chat(served, std::move(inputs));
  Json sampling = Json::object();  // Anthropic's names for the shared fields
  for (const char* key : {"temperature", "top_p", "top_k"})
    if (const Json* v = f.get(key)) sampling[key] = *v;
  if (const Json* stop = f.get("stop_sequences")) sampling["stop"] = *stop;
  r.params = parse_sampling(Fields(sampling), {context.limits, served.defaults, served.vocab_size});
  // any or a named tool: the output is one call of an offered tool, in the model's syntax.
  const Json choice = {{"tool_choice", openai_tool_choice(f)}};
  if (!choice["tool_choice"].is_null())
    r.params.constraint = parse_tool_choice(Fields(choice), tools, served.output_format.tools,
                                            context.grammars.get());
  adapt_sampling(served, r.prompt, r.params);
  f.required("max_tokens");
  r.params.max_tokens =
      resolve_max_tokens(f.integer("max_tokens"), static_cast<int64_t>(r.prompt.ids.size()),
                         served.max_model_len, {"max_tokens", "messages"});
  r.stream = f.boolean("stream").value_or(false);
  return r;
}

std::string stop_reason(const ChatChoice& c) {
  if (!c.message.tool_calls.empty()) return "tool_use";
  if (!c.stop_string.empty()) return "stop_sequence";
  return c.finish == FinishReason::kLength ? "max_tokens" : "end_turn";
}

Json stop_sequence(const ChatChoice& c) {
  return c.stop_string.empty() ? Json(nullptr) : Json(c.stop_string);
}

Json tool_use_block(const ToolCall& call, const std::string& id) {
  return {{"type", "tool_use"},
          {"id", id},
          {"name", call.name},
          {"input", Json::parse(call.arguments, nullptr, false)}};
}

Json message_json(const std::string& id, const std::string& model, Json content, Json stop,
                  Json stop_sequence, int64_t input_tokens, int64_t output_tokens) {
  return {{"id", id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", model},
          {"content", std::move(content)},
          {"stop_reason", std::move(stop)},
          {"stop_sequence", std::move(stop_sequence)},
          {"usage", {{"input_tokens", input_tokens}, {"output_tokens", output_tokens}}}};
}

// Streams Anthropic's events: message_start, then per block start / deltas / stop, then
// message_delta (stop reason, usage) and message_stop.
class MessagesStream final : public EventSource {
 public:
  MessagesStream(ServerContext& context, MessagesRequest request, const httplib::Request& http)
      : context_(context),
        request_(std::move(request)),
        client_(http),
        generation_(context, client_, request_.prompt.ids, request_.params),
        choice_(make_chat_choice(context.model.output_format, request_.tools_offered,
                                 request_.prompt.starts_in_reasoning)),
        id_(random_id("msg_")) {}

  bool poll(std::string& out) override {
    if (!started_) {
      started_ = true;
      out += sse_event("message_start",
                       {{"type", "message_start"},
                        {"message", message_json(id_, context_.model.name, Json::array(), nullptr,
                                                 nullptr, generation_.n_prompt_tokens(), 0)}});
    }
    for (const RequestOutput& o : generation_.next()) emit(choice_.add(o), out);
    if (!generation_.done()) return true;
    close_block(out);
    out += sse_event(
        "message_delta",
        {{"type", "message_delta"},
         {"delta",
          {{"stop_reason", stop_reason(choice_)}, {"stop_sequence", stop_sequence(choice_)}}},
         {"usage", {{"output_tokens", choice_.n_tokens}}}});
    out += sse_event("message_stop", {{"type", "message_stop"}});
    return false;
  }

  std::string error_event(int status, const std::string& message) override {
    return sse_event("error",
                     {{"type", "error"},
                      {"error", {{"type", ApiError(status, "").type()}, {"message", message}}}});
  }

 private:
  void open_block(const std::string& type, Json block, std::string& out) {
    if (open_type_ == type && type != "tool_use") return;
    close_block(out);
    open_type_ = type;
    out +=
        sse_event("content_block_start",
                  {{"type", "content_block_start"}, {"index", index_}, {"content_block", block}});
  }

  void close_block(std::string& out) {
    if (open_type_.empty()) return;
    out += sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_}});
    ++index_;
    open_type_.clear();
  }

  void delta(const Json& d, std::string& out) {
    out += sse_event("content_block_delta",
                     {{"type", "content_block_delta"}, {"index", index_}, {"delta", d}});
  }

  void emit(const ParsedDelta& d, std::string& out) {
    if (!d.reasoning.empty()) {
      open_block("thinking", {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, out);
      delta({{"type", "thinking_delta"}, {"thinking", d.reasoning}}, out);
    }
    if (!d.content.empty()) {
      open_block("text", {{"type", "text"}, {"text", ""}}, out);
      delta({{"type", "text_delta"}, {"text", d.content}}, out);
    }
    const size_t first = choice_.message.tool_calls.size() - d.tool_calls.size();
    for (size_t i = 0; i < d.tool_calls.size(); ++i) {
      const ToolCall& call = d.tool_calls[i];
      open_block("tool_use",
                 {{"type", "tool_use"},
                  {"id", choice_.tool_call_ids[first + i]},
                  {"name", call.name},
                  {"input", Json::object()}},
                 out);
      delta({{"type", "input_json_delta"}, {"partial_json", call.arguments}}, out);
    }
  }

  ServerContext& context_;
  MessagesRequest request_;
  ClientConnection client_;
  Generation generation_;
  ChatChoice choice_;
  std::string id_;
  bool started_ = false;
  std::string open_type_;  // the open content block's type; empty when none
  int index_ = 0;
};

}  // namespace

void handle_messages(ServerContext& context, const httplib::Request& request,
                     httplib::Response& response) {
  MessagesRequest r = parse_messages_request(parse_body(request.body, context.limits), context);
  if (r.stream) {
    respond_with_events(response, std::make_shared<MessagesStream>(context, std::move(r), request));
    return;
  }
  const ClientConnection client(request);
  Generation g(context, client, r.prompt.ids, r.params);
  ChatChoice c =
      make_chat_choice(context.model.output_format, r.tools_offered, r.prompt.starts_in_reasoning);
  while (!g.done())
    for (const RequestOutput& o : g.next()) c.add(o);
  Json content = Json::array();
  if (!c.message.reasoning.empty())
    content.push_back({{"type", "thinking"}, {"thinking", c.message.reasoning}, {"signature", ""}});
  if (!c.message.content.empty())
    content.push_back({{"type", "text"}, {"text", c.message.content}});
  for (size_t i = 0; i < c.message.tool_calls.size(); ++i)
    content.push_back(tool_use_block(c.message.tool_calls[i], c.tool_call_ids[i]));
  response.set_content(
      dump_json(message_json(random_id("msg_"), context.model.name, content, stop_reason(c),
                             stop_sequence(c), g.n_prompt_tokens(), c.n_tokens)),
      "application/json");
}

}  // namespace hadron::server
