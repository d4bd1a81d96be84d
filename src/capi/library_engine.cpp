#include "capi/library_engine.h"

#include "app/engine_flags.h"
#include "app/prompt_input.h"
#include "chat/chat_template_loader.h"
#include "core/error.h"
#include "server/api_error.h"
#include "server/chat_prompt.h"

namespace hadron::capi {

LibraryEngine::LibraryEngine(const LibraryOptions& options) {
  const std::string& root = options.engine.model_path;
  tokenizer_ = app::load_tokenizer_if_any(root);
  if (tokenizer_) detokenizer_ = std::make_unique<TokenizerDetokenizer>(*tokenizer_);
  served_.root = root;
  served_.name = root;
  served_.tokenizer = tokenizer_.get();
  served_.defaults = read_generation_defaults(root);
  try {
    const chat::ModelChatTemplate found = chat::load_chat_template(root);
    served_.chat_template = chat::ChatTemplate::parse(found.source);
    served_.bos_token = found.bos_token;
    served_.eos_token = found.eos_token;
  } catch (const InputError&) {
    // No template: chat requests are refused with the server's message.
  }
  model_ = app::load_model(options.engine);
  served_.max_model_len = model_->max_model_len();
  served_.vocab_size = static_cast<int32_t>(model_->config().vocab_size);
  engine_ = std::make_unique<Engine>(*model_, detokenizer_.get(), served_.defaults.eos_token_ids);
  async_engine_ = std::make_unique<AsyncEngine>(
      *engine_, AsyncEngineOptions{.max_queued_requests = options.max_queued_requests});
}

LibraryEngine::~LibraryEngine() = default;

uint64_t LibraryEngine::add(std::vector<int32_t> prompt, std::string_view sampling_json) {
  const server::SamplingContext context{limits_, served_.defaults, served_.vocab_size};
  RequestSampling sampling = parse_request_sampling(sampling_json, context);
  if (prompt.empty()) server::bad_request("prompt", "the prompt is empty");
  for (int32_t id : prompt)
    if (id < 0 || id >= served_.vocab_size)
      server::bad_request("prompt", "token id {} is outside the vocabulary [0, {})", id,
                          served_.vocab_size);
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  sampling.params.max_tokens = max_tokens_for(sampling, n_prompt, served_.max_model_len);
  std::shared_ptr<RequestStream> stream;
  try {
    stream = async_engine_->submit(std::move(prompt), std::move(sampling.params));
  } catch (const Error& e) {
    throw EngineFailure(e.what());
  }
  if (std::optional<std::string> rejection = stream->wait_accepted()) input_error("{}", *rejection);
  if (std::optional<std::string> failure = stream->failure()) throw EngineFailure(*failure);
  n_prompt_tokens_ += n_prompt;
  auto request = std::make_shared<Request>();
  request->stream = std::move(stream);
  const uint64_t id = request->stream->request_id();
  std::lock_guard lock(mutex_);
  requests_.emplace(id, std::move(request));
  return id;
}

std::vector<int32_t> LibraryEngine::encode(const std::string& text, bool add_special_tokens) const {
  if (tokenizer_ == nullptr)
    input_error("the model folder {} has no tokenizer; give token ids", served_.root);
  return tokenizer_->encode(text, add_special_tokens);
}

std::string LibraryEngine::render_chat(std::string_view messages_json) const {
  server::Json body = server::Json::object();
  body["messages"] = parse_json_within_limits(messages_json, limits_, "messages");
  server::ChatInputs inputs;
  inputs.messages = server::openai_messages(server::Fields(body), limits_);
  return server::render_chat_text(served_, std::move(inputs));
}

std::shared_ptr<LibraryEngine::Request> LibraryEngine::find(uint64_t request_id) {
  std::lock_guard lock(mutex_);
  auto it = requests_.find(request_id);
  if (it == requests_.end())
    throw NotFoundError(
        fmt::format("no request {}: it finished, was aborted or never existed", request_id));
  return it->second;
}

void LibraryEngine::forget(uint64_t request_id) {
  std::lock_guard lock(mutex_);
  requests_.erase(request_id);
}

std::optional<PolledOutput> LibraryEngine::poll(uint64_t request_id,
                                                std::chrono::milliseconds timeout) {
  const std::shared_ptr<Request> request = find(request_id);
  std::lock_guard lock(request->mutex);
  RequestStream& stream = *request->stream;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (request->pending.empty() && !stream.done()) {
    const auto wait = timeout.count() < 0 ? std::chrono::milliseconds(100)
                                          : std::chrono::duration_cast<std::chrono::milliseconds>(
                                                deadline - std::chrono::steady_clock::now());
    for (RequestOutput& out : stream.wait_outputs(std::max(wait, std::chrono::milliseconds(0))))
      request->pending.push_back(std::move(out));
    if (std::optional<std::string> failure = stream.failure()) {
      forget(request_id);
      throw EngineFailure("the engine failed: " + *failure);
    }
    if (timeout.count() >= 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  if (request->pending.empty()) {
    if (!stream.done()) return std::nullopt;
    forget(request_id);  // closed without a final output (an abort between steps)
    throw NotFoundError(fmt::format("request {} has ended", request_id));
  }
  PolledOutput polled{std::move(request->pending.front()), false};
  request->pending.pop_front();
  n_generation_tokens_ += static_cast<int64_t>(polled.output.token_ids.size());
  if (request->pending.empty() && stream.done()) {
    polled.last = true;
    ++n_finished_requests_;
    forget(request_id);
  }
  return polled;
}

void LibraryEngine::abort(uint64_t request_id) {
  find(request_id);
  forget(request_id);
  async_engine_->abort(request_id);
}

nlohmann::json LibraryEngine::metrics() const {
  const EngineStats stats = async_engine_->stats();
  return {{"num_requests_running", stats.n_running},
          {"num_requests_waiting", stats.n_waiting},
          {"num_requests_finished", n_finished_requests_.load()},
          {"kv_cache_usage", stats.kv_usage},
          {"prompt_tokens", n_prompt_tokens_.load()},
          {"generation_tokens", n_generation_tokens_.load()},
          {"num_preemptions", stats.n_preemptions},
          {"num_steps", stats.n_steps},
          {"prefix_cache_queries", stats.prefix_queried_tokens},
          {"prefix_cache_hits", stats.prefix_hit_tokens},
          {"max_model_len", served_.max_model_len},
          {"vocab_size", served_.vocab_size}};
}

}  // namespace hadron::capi
