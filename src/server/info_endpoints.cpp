// GET /v1/models, /health, /version, /metrics; POST /tokenize, /detokenize.
#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/handlers.h"
#include "server/openai_common.h"
#include "server/sse.h"

namespace hadron::server {

namespace {

const char* kVersion = "0.1.0";

void send_json(httplib::Response& response, const Json& body) {
  response.set_content(dump_json(body), "application/json");
}

const Tokenizer& tokenizer_of(const ServerContext& context) {
  if (context.model.tokenizer == nullptr) bad_request("", "this model has no tokenizer");
  return *context.model.tokenizer;
}

}  // namespace

void handle_models(ServerContext& context, const httplib::Request&, httplib::Response& response) {
  const Json model = {{"id", context.model.name},   {"object", "model"},
                      {"created", unix_time()},     {"owned_by", "hadron"},
                      {"root", context.model.root}, {"max_model_len", context.model.max_model_len}};
  send_json(response, {{"object", "list"}, {"data", Json::array({model})}});
}

void handle_health(ServerContext& context, const httplib::Request&, httplib::Response& response) {
  AsyncEngine* engine = context.engine.load();
  if (engine == nullptr) throw ApiError(503, "the model is still loading");
  if (context.draining) throw ApiError(503, "the server is shutting down");
  if (std::optional<std::string> error = engine->fatal_error())
    throw ApiError(503, "the engine stopped: " + *error);
  send_json(response, {{"status", "ok"}});
}

void handle_version(ServerContext&, const httplib::Request&, httplib::Response& response) {
  send_json(response, {{"version", kVersion}});
}

void handle_metrics(ServerContext& context, const httplib::Request&, httplib::Response& response) {
  AsyncEngine* engine = context.engine.load();
  const EngineStats stats = engine ? engine->stats() : EngineStats{};
  response.set_content(context.metrics.render(stats, context.model.name),
                       "text/plain; version=0.0.4");
}

void handle_tokenize(ServerContext& context, const httplib::Request& request,
                     httplib::Response& response) {
  const Json body = parse_body(request.body, context.limits);
  const Fields f(body);
  check_model(f, context.model);
  std::vector<int32_t> ids;
  if (f.get("messages") != nullptr) {
    ids = render_chat(context.model, openai_chat_inputs(f, context.model, context.limits)).ids;
  } else {
    const std::optional<std::string> prompt = f.string("prompt");
    if (!prompt) throw ApiError(422, "'prompt' or 'messages' is required", "prompt", "missing");
    ids = tokenizer_of(context).encode(*prompt, f.boolean("add_special_tokens").value_or(true));
  }
  Json token_strs = Json::array();
  if (f.boolean("return_token_strs").value_or(false))
    for (int32_t id : ids) token_strs.push_back(tokenizer_of(context).id_to_token(id));
  Json out = {
      {"count", ids.size()}, {"max_model_len", context.model.max_model_len}, {"tokens", ids}};
  if (!token_strs.empty()) out["token_strs"] = token_strs;
  send_json(response, out);
}

void handle_detokenize(ServerContext& context, const httplib::Request& request,
                       httplib::Response& response) {
  const Json body = parse_body(request.body, context.limits);
  const Fields f(body);
  check_model(f, context.model);
  const Json& tokens = f.required("tokens");
  if (!tokens.is_array()) f.wrong_type("tokens", "an array of token ids");
  std::vector<int32_t> ids;
  for (const Json& id : tokens) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= context.model.vocab_size)
      bad_request("tokens", "tokens must be ids in [0, {})", context.model.vocab_size);
    ids.push_back(id.get<int32_t>());
  }
  send_json(response, {{"prompt", tokenizer_of(context).decode(ids, false)}});
}

}  // namespace hadron::server
