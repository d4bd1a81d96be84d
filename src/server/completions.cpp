// POST /v1/completions: one or many prompts (text or token ids), n completions each.
#include <memory>
#include <set>

#include "server/api_error.h"
#include "server/generation.h"
#include "server/handlers.h"
#include "server/openai_common.h"
#include "server/sse.h"

namespace hadron::server {
namespace {

struct CompletionPrompt {
  std::vector<int32_t> ids;
  std::string text;  // for echo
};

std::vector<int32_t> ids_of(const Json& array, const ServedModel& served) {
  std::vector<int32_t> ids;
  for (const Json& id : array) {
    if (!id.is_number_integer()) bad_request("prompt", "a token-id prompt must hold integers");
    const int64_t value = id.get<int64_t>();
    if (value < 0 || value >= served.vocab_size)
      bad_request("prompt", "token id {} is outside the vocabulary [0, {})", value,
                  served.vocab_size);
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

CompletionPrompt text_prompt(const std::string& text, const ServedModel& served) {
  if (served.tokenizer == nullptr)
    bad_request("prompt", "this model has no tokenizer; send token ids");
  return {served.tokenizer->encode(text, /*add_special_tokens=*/true), text};
}

std::vector<CompletionPrompt> read_prompts(const Fields& fields, const ServerContext& context) {
  const Json& prompt = fields.required("prompt");
  const ServedModel& served = context.model;
  std::vector<CompletionPrompt> prompts;
  if (prompt.is_string()) {
    prompts.push_back(text_prompt(prompt.get<std::string>(), served));
  } else if (prompt.is_array() && !prompt.empty() && prompt[0].is_number()) {
    prompts.push_back({ids_of(prompt, served), {}});
  } else if (prompt.is_array()) {
    if (prompt.size() > context.limits.max_prompts)
      bad_request("prompt", "at most {} prompts per request", context.limits.max_prompts);
    for (const Json& p : prompt) {
      if (p.is_string())
        prompts.push_back(text_prompt(p.get<std::string>(), served));
      else if (p.is_array())
        prompts.push_back({ids_of(p, served), {}});
      else
        fields.wrong_type("prompt", "a string, an array of strings or of token-id arrays");
    }
  } else {
    fields.wrong_type("prompt", "a string, an array of strings or of token-id arrays");
  }
  if (prompts.empty()) bad_request("prompt", "the prompt is empty");
  for (const CompletionPrompt& p : prompts)
    if (p.ids.empty()) bad_request("prompt", "a prompt is empty");
  return prompts;
}

struct CompletionRequest {
  std::vector<CompletionPrompt> prompts;
  SamplingParams params;
  bool echo = false;
  bool stream = false;
  bool include_usage = false;
  bool return_token_ids = false;  // each choice also carries its token ids (vLLM's field)
  std::optional<int64_t> max_tokens;
};

CompletionRequest parse_completion_request(const Json& body, ServerContext& context) {
  const Fields f(body);
  check_model(f, context.model);
  CompletionRequest r;
  r.prompts = read_prompts(f, context);
  r.params = parse_sampling(f, {context.limits, context.model.defaults, context.model.vocab_size,
                                context.grammars.get()});
  r.max_tokens = f.integer("max_tokens").value_or(16);
  if (std::optional<int64_t> k = f.integer("logprobs")) {
    if (*k < 0 || *k > context.limits.max_logprobs)
      bad_request("logprobs", "'logprobs' must be in [0, {}]", context.limits.max_logprobs);
    r.params.logprobs = static_cast<int>(*k);
  }
  r.echo = f.boolean("echo").value_or(false);
  // max_tokens 0 with echo returns the prompt alone (with its logprobs), as OpenAI's legacy API
  // and vLLM do: the classic way to score a text.
  if (r.max_tokens == 0 && !r.echo)
    bad_request("max_tokens", "'max_tokens' must be >= 1 (0 only with echo: the prompt alone)");
  // Echo with logprobs shows the prompt's tokens with theirs too (as vLLM does).
  if (r.echo && r.params.logprobs >= 0) r.params.prompt_logprobs = r.params.logprobs;
  r.stream = f.boolean("stream").value_or(false);
  if (const Json* options = f.get("stream_options"))
    r.include_usage = Fields(*options, "stream_options").boolean("include_usage").value_or(false);
  // Without a tokenizer there is no text: the ids are the output.
  r.return_token_ids =
      f.boolean("return_token_ids").value_or(false) || context.model.tokenizer == nullptr;
  return r;
}

// Every prompt's generation, submitted together so they batch.
struct Run {
  ClientConnection client;
  std::vector<std::unique_ptr<Generation>> generations;
  Run(const httplib::Request& request) : client(request) {}
};

std::unique_ptr<Run> start(CompletionRequest& r, ServerContext& context,
                           const httplib::Request& request) {
  auto run = std::make_unique<Run>(request);
  for (CompletionPrompt& prompt : r.prompts) {
    SamplingParams params = r.params;
    params.max_tokens = resolve_max_tokens(r.max_tokens, static_cast<int64_t>(prompt.ids.size()),
                                           context.model.max_model_len,
                                           {"max_tokens", "prompt", /*zero_allowed=*/r.echo});
    run->generations.push_back(
        std::make_unique<Generation>(context, run->client, prompt.ids, std::move(params)));
  }
  return run;
}

struct Choice {
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<Logprobs> logprobs;
  FinishReason finish = FinishReason::kNone;
  std::string stop_string;
  int64_t n_tokens = 0;
};

class CompletionStream final : public EventSource {
 public:
  CompletionStream(ServerContext& context, CompletionRequest request, std::unique_ptr<Run> run)
      : context_(context),
        request_(std::move(request)),
        run_(std::move(run)),
        id_(random_id("cmpl-")),
        created_(unix_time()),
        prompt_logprobs_(run_->generations.size()) {}

  bool poll(std::string& out) override {
    bool all_done = true;
    for (size_t p = 0; p < run_->generations.size(); ++p) {
      Generation& g = *run_->generations[p];
      for (RequestOutput& o :
           g.next(std::chrono::milliseconds(run_->generations.size() > 1 ? 2 : 20)))
        out += chunk(p, o);
      all_done = all_done && g.done();
    }
    if (!all_done) return true;
    if (request_.include_usage) {
      int64_t prompt_tokens = 0;
      for (const auto& g : run_->generations) prompt_tokens += g->n_prompt_tokens();
      out += sse_data(envelope(Json::array(), usage_json(prompt_tokens, n_completion_tokens_)));
    }
    out += kSseDone;
    return false;
  }

  std::string error_event(int status, const std::string& message) override {
    return openai_stream_error(status, message);
  }

 private:
  Json envelope(Json choices, Json usage = nullptr) const {
    Json j = {{"id", id_},
              {"object", "text_completion"},
              {"created", created_},
              {"model", context_.model.name},
              {"choices", std::move(choices)}};
    if (request_.include_usage) j["usage"] = std::move(usage);
    return j;
  }

  std::string chunk(size_t prompt_idx, const RequestOutput& o) {
    const int index = static_cast<int>(prompt_idx) * request_.params.n + o.index;
    std::string text = o.text;
    // The first output of index 0 carries the prompt's logprobs; its siblings' come later.
    if (!o.prompt_logprobs.empty()) prompt_logprobs_[prompt_idx] = o.prompt_logprobs;
    const bool echo_now = request_.echo && echoed_.insert(index).second;
    if (echo_now) text = request_.prompts[prompt_idx].text + text;
    n_completion_tokens_ += static_cast<int64_t>(o.token_ids.size());
    Json logprobs = nullptr;
    if (request_.params.logprobs >= 0) {
      size_t offset = 0;
      if (echo_now)
        append_prompt_logprobs(context_.model, request_.prompts[prompt_idx].ids,
                               prompt_logprobs_[prompt_idx], offset, logprobs);
      append_completion_logprobs(context_.model, o.logprobs, offset, logprobs);
    }
    Json choice = {{"index", index},
                   {"text", text},
                   {"logprobs", logprobs},
                   {"finish_reason", finish_reason_json(o.finish_reason)}};
    if (o.finished) choice["stop_reason"] = stop_reason_json(o.stop_string);
    if (request_.return_token_ids) choice["token_ids"] = o.token_ids;
    return sse_data(envelope(Json::array({choice})));
  }

  ServerContext& context_;
  CompletionRequest request_;
  std::unique_ptr<Run> run_;
  std::string id_;
  int64_t created_;
  int64_t n_completion_tokens_ = 0;
  std::set<int> echoed_;
  std::vector<std::vector<Logprobs>> prompt_logprobs_;  // by prompt, for echo
};

Json collect(ServerContext& context, CompletionRequest& r, Run& run) {
  const int n = r.params.n;
  std::vector<Choice> choices(run.generations.size() * n);
  std::vector<std::vector<Logprobs>> prompt_logprobs(run.generations.size());  // for echo
  int64_t prompt_tokens = 0, completion_tokens = 0;
  for (size_t p = 0; p < run.generations.size(); ++p) {
    Generation& g = *run.generations[p];
    prompt_tokens += g.n_prompt_tokens();
    while (!g.done()) {
      for (RequestOutput& o : g.next()) {
        Choice& c = choices[p * n + o.index];
        if (r.echo && c.text.empty() && c.n_tokens == 0) c.text = r.prompts[p].text;
        if (!o.prompt_logprobs.empty()) prompt_logprobs[p] = std::move(o.prompt_logprobs);
        c.text += o.text;
        c.token_ids.insert(c.token_ids.end(), o.token_ids.begin(), o.token_ids.end());
        c.n_tokens += static_cast<int64_t>(o.token_ids.size());
        c.logprobs.insert(c.logprobs.end(), o.logprobs.begin(), o.logprobs.end());
        if (o.finished) {
          c.finish = o.finish_reason;
          c.stop_string = o.stop_string;
        }
      }
    }
  }
  Json out_choices = Json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    completion_tokens += choices[i].n_tokens;
    Json logprobs = nullptr;
    if (r.params.logprobs >= 0) {
      size_t offset = 0;
      if (r.echo)
        append_prompt_logprobs(context.model, r.prompts[i / n].ids, prompt_logprobs[i / n], offset,
                               logprobs);
      append_completion_logprobs(context.model, choices[i].logprobs, offset, logprobs);
    }
    Json choice = {{"index", i},
                   {"text", choices[i].text},
                   {"logprobs", logprobs},
                   {"finish_reason", finish_reason_json(choices[i].finish)},
                   {"stop_reason", stop_reason_json(choices[i].stop_string)}};
    if (r.return_token_ids) choice["token_ids"] = choices[i].token_ids;
    out_choices.push_back(std::move(choice));
  }
  return {{"id", random_id("cmpl-")}, {"object", "text_completion"},
          {"created", unix_time()},   {"model", context.model.name},
          {"choices", out_choices},   {"usage", usage_json(prompt_tokens, completion_tokens)}};
}

}  // namespace

void handle_completions(ServerContext& context, const httplib::Request& request,
                        httplib::Response& response) {
  CompletionRequest r = parse_completion_request(parse_body(request.body, context.limits), context);
  std::unique_ptr<Run> run = start(r, context, request);
  if (r.stream) {
    respond_with_events(response,
                        std::make_shared<CompletionStream>(context, std::move(r), std::move(run)));
    return;
  }
  response.set_content(dump_json(collect(context, r, *run)), "application/json");
}

}  // namespace hadron::server
