// POST /v1/chat/completions: the chat template, n choices, reasoning and tool calls split out.
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

struct ChatRequest {
  ChatPrompt prompt;
  SamplingParams params;
  bool tools_offered = false;
  bool stream = false;
  bool include_usage = false;
};

int top_logprobs(const Fields& f, const RequestLimits& limits) {
  if (!f.boolean("logprobs").value_or(false)) {
    if (f.get("top_logprobs")) bad_request("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    return -1;
  }
  const int64_t k = f.integer("top_logprobs").value_or(0);
  if (k < 0 || k > limits.max_logprobs)
    bad_request("top_logprobs", "'top_logprobs' must be in [0, {}]", limits.max_logprobs);
  return static_cast<int>(k);
}

void check_tool_choice(const Fields& f, bool& tools_offered) {
  const Json* choice = f.get("tool_choice");
  if (choice != nullptr && *choice == "none")
    tools_offered = false;  // the template still sees them; no calls are parsed
}

ChatRequest parse_chat_request(const Json& body, ServerContext& context) {
  const Fields f(body);
  const ServedModel& served = context.model;
  check_model(f, served);
  ChatRequest r;
  ChatInputs inputs = openai_chat_inputs(f, served, context.limits);
  r.tools_offered = !inputs.tools.is_null();
  check_tool_choice(f, r.tools_offered);
  if (std::optional<std::string> effort = f.string("reasoning_effort"))
    inputs.kwargs["reasoning_effort"] = *effort;
  const Json tools = inputs.tools;
  r.prompt = render_chat(served, std::move(inputs));
  r.params = parse_sampling(
      f, {context.limits, served.defaults, served.vocab_size, context.grammars.get()});
  if (auto call = parse_tool_choice(f, tools, served.output_format.tools, context.grammars.get())) {
    if (r.params.constraint)
      bad_request("tool_choice",
                  "tool_choice and a structured-output field both constrain the "
                  "output; give one");
    r.params.constraint = std::move(call);
  }
  adapt_sampling(served, r.prompt, r.params);
  r.params.logprobs = top_logprobs(f, context.limits);
  std::optional<int64_t> max_tokens = f.integer("max_completion_tokens");
  const char* max_param = "max_completion_tokens";
  if (!max_tokens) {
    max_tokens = f.integer("max_tokens");
    max_param = "max_tokens";
  }
  r.params.max_tokens = resolve_max_tokens(max_tokens, static_cast<int64_t>(r.prompt.ids.size()),
                                           served.max_model_len, {max_param, "messages"});
  r.stream = f.boolean("stream").value_or(false);
  if (const Json* options = f.get("stream_options"))
    r.include_usage = Fields(*options, "stream_options").boolean("include_usage").value_or(false);
  return r;
}

Json tool_calls_json(const std::vector<ToolCall>& calls, const std::vector<std::string>& ids,
                     size_t first_index, bool with_index) {
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    Json call = {{"id", ids[first_index + i]},
                 {"type", "function"},
                 {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (with_index) call["index"] = first_index + i;
    out.push_back(std::move(call));
  }
  return out;
}

Json chat_finish_reason(const ChatChoice& c) {
  if (c.finish == FinishReason::kStop && !c.message.tool_calls.empty()) return "tool_calls";
  return finish_reason_json(c.finish);
}

Json message_json(const ChatChoice& c) {
  Json message = {{"role", "assistant"}};
  message["content"] = c.message.content.empty() && !c.message.tool_calls.empty()
                           ? Json(nullptr)
                           : Json(c.message.content);
  if (!c.message.reasoning.empty()) message["reasoning_content"] = c.message.reasoning;
  if (!c.message.tool_calls.empty())
    message["tool_calls"] = tool_calls_json(c.message.tool_calls, c.tool_call_ids, 0, false);
  return message;
}

std::vector<ChatChoice> make_choices(const ServerContext& context, const ChatRequest& r) {
  std::vector<ChatChoice> choices;
  for (int i = 0; i < r.params.n; ++i)
    choices.push_back(make_chat_choice(context.model.output_format, r.tools_offered,
                                       r.prompt.starts_in_reasoning));
  return choices;
}

Json collect(ServerContext& context, ChatRequest& r, Generation& g) {
  std::vector<ChatChoice> choices = make_choices(context, r);
  while (!g.done())
    for (const RequestOutput& o : g.next()) choices[o.index].add(o);
  Json out_choices = Json::array();
  int64_t completion_tokens = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChatChoice& c = choices[i];
    completion_tokens += c.n_tokens;
    Json logprobs = nullptr;
    if (r.params.logprobs >= 0) {
      logprobs = {{"content", Json::array()}};
      append_chat_logprobs(context.model, c.logprobs, logprobs["content"]);
    }
    out_choices.push_back({{"index", i},
                           {"message", message_json(c)},
                           {"logprobs", logprobs},
                           {"finish_reason", chat_finish_reason(c)},
                           {"stop_reason", stop_reason_json(c.stop_string)}});
  }
  return {{"id", random_id("chatcmpl-")},
          {"object", "chat.completion"},
          {"created", unix_time()},
          {"model", context.model.name},
          {"choices", out_choices},
          {"usage", usage_json(g.n_prompt_tokens(), completion_tokens)}};
}

class ChatStream final : public EventSource {
 public:
  ChatStream(ServerContext& context, ChatRequest request, const httplib::Request& http)
      : context_(context),
        request_(std::move(request)),
        client_(http),
        generation_(context, client_, request_.prompt.ids, request_.params),
        choices_(make_choices(context, request_)),
        id_(random_id("chatcmpl-")),
        created_(unix_time()) {}

  bool poll(std::string& out) override {
    if (!started_) {
      started_ = true;
      for (int i = 0; i < request_.params.n; ++i)
        out += chunk(i, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr);
    }
    for (const RequestOutput& o : generation_.next()) out += on_output(o);
    if (!generation_.done()) return true;
    if (request_.include_usage) {
      int64_t completion_tokens = 0;
      for (const ChatChoice& c : choices_) completion_tokens += c.n_tokens;
      Json usage_chunk = envelope(Json::array());
      usage_chunk["usage"] = usage_json(generation_.n_prompt_tokens(), completion_tokens);
      out += sse_data(usage_chunk);
    }
    out += kSseDone;
    return false;
  }

  std::string error_event(int status, const std::string& message) override {
    return openai_stream_error(status, message);
  }

 private:
  Json envelope(Json choices) const {
    Json j = {{"id", id_},
              {"object", "chat.completion.chunk"},
              {"created", created_},
              {"model", context_.model.name},
              {"choices", std::move(choices)}};
    if (request_.include_usage) j["usage"] = nullptr;
    return j;
  }

  Json sse_chunk_json(int index, Json delta, Json logprobs, Json finish_reason) const {
    Json choice = {{"index", index},
                   {"delta", std::move(delta)},
                   {"logprobs", std::move(logprobs)},
                   {"finish_reason", std::move(finish_reason)}};
    return envelope(Json::array({std::move(choice)}));
  }

  std::string chunk(int index, Json delta, Json logprobs, Json finish_reason) const {
    return sse_data(
        sse_chunk_json(index, std::move(delta), std::move(logprobs), std::move(finish_reason)));
  }

  std::string on_output(const RequestOutput& o) {
    ChatChoice& c = choices_[o.index];
    const size_t first_call = c.message.tool_calls.size();
    const ParsedDelta d = c.add(o);
    Json delta = Json::object();
    if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
    if (!d.content.empty()) delta["content"] = d.content;
    if (!d.tool_calls.empty())
      delta["tool_calls"] = tool_calls_json(d.tool_calls, c.tool_call_ids, first_call, true);
    Json logprobs = nullptr;
    if (request_.params.logprobs >= 0 && !o.logprobs.empty()) {
      logprobs = {{"content", Json::array()}};
      append_chat_logprobs(context_.model, o.logprobs, logprobs["content"]);
    }
    std::string out;
    if (!delta.empty() || !logprobs.is_null()) out += chunk(o.index, delta, logprobs, nullptr);
    if (o.finished) {
      Json last = sse_chunk_json(o.index, Json::object(), nullptr, chat_finish_reason(c));
      last["choices"][0]["stop_reason"] = stop_reason_json(c.stop_string);
      out += sse_data(last);
    }
    return out;
  }

  ServerContext& context_;
  ChatRequest request_;
  ClientConnection client_;
  Generation generation_;
  std::vector<ChatChoice> choices_;
  std::string id_;
  int64_t created_;
  bool started_ = false;
};

}  // namespace

void handle_chat_completions(ServerContext& context, const httplib::Request& request,
                             httplib::Response& response) {
  ChatRequest r = parse_chat_request(parse_body(request.body, context.limits), context);
  if (r.stream) {
    respond_with_events(response, std::make_shared<ChatStream>(context, std::move(r), request));
    return;
  }
  const ClientConnection client(request);
  Generation generation(context, client, r.prompt.ids, r.params);
  response.set_content(dump_json(collect(context, r, generation)), "application/json");
}

}  // namespace hadron::server
