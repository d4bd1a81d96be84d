#include "server/generation.h"

#include "core/error.h"
#include "server/api_error.h"

namespace hadron::server {
namespace {

AsyncEngine& running_engine(ServerContext& context) {
  AsyncEngine* engine = context.engine.load();
  if (engine == nullptr) throw ApiError(503, "the model is still loading");
  if (context.draining) throw ApiError(503, "the server is shutting down");
  return *engine;
}

}  // namespace

Generation::Generation(ServerContext& context, const ClientConnection& client,
                       std::vector<int32_t> prompt, SamplingParams params)
    : context_(context), engine_(running_engine(context)), client_(client), start_(Clock::now()) {
  n_prompt_tokens_ = static_cast<int64_t>(prompt.size());
  try {
    stream_ = engine_.submit(std::move(prompt), std::move(params));
  } catch (const QueueFullError& e) {
    throw ApiError(429, e.what());
  } catch (const Error& e) {
    throw ApiError(503, e.what());
  }
  if (std::optional<std::string> rejection = stream_->wait_accepted()) {
    finished_ = true;
    throw ApiError(400, *rejection);
  }
  if (std::optional<std::string> failure = stream_->failure()) {
    finished_ = true;
    throw ApiError(500, *failure);
  }
  context_.metrics.add_prompt_tokens(n_prompt_tokens_);
}

Generation::~Generation() {
  if (!finished_ && !stream_->done()) {
    engine_.abort(stream_->request_id());
    context_.metrics.count_request("abort");
  }
}

std::vector<RequestOutput> Generation::next(std::chrono::milliseconds timeout) {
  std::vector<RequestOutput> outputs = stream_->wait_outputs(timeout);
  if (std::optional<std::string> failure = stream_->failure()) {
    finished_ = true;
    context_.metrics.count_request("error");
    throw ApiError(500, "the engine failed: " + *failure);
  }
  // The socket is polled at most every 20 ms, outputs or not: a busy engine delivers outputs
  // every step, and a client that left must still be noticed.
  const Clock::time_point now = Clock::now();
  const bool check_client = outputs.empty() || now - last_client_check_ >= kClientCheckInterval;
  if (check_client) last_client_check_ = now;
  if (check_client && !stream_->done() && client_.closed()) {
    engine_.abort(stream_->request_id());
    finished_ = true;
    context_.metrics.count_request("abort");
    throw ClientGone();
  }
  observe(outputs);
  return outputs;
}

void Generation::observe(const std::vector<RequestOutput>& outputs) {
  const Clock::time_point now = Clock::now();
  for (const RequestOutput& out : outputs) {
    const auto n_tokens = static_cast<int64_t>(out.token_ids.size());
    context_.metrics.add_generation_tokens(n_tokens);
    if (n_tokens > 0 && !first_seen_) {
      first_seen_ = true;
      context_.metrics.ttft().observe(std::chrono::duration<double>(now - start_).count());
    } else if (n_tokens > 0) {
      const double gap = std::chrono::duration<double>(now - last_token_).count();
      for (int64_t i = 0; i < n_tokens; ++i) context_.metrics.inter_token().observe(gap / n_tokens);
    }
    if (n_tokens > 0) last_token_ = now;
  }
  if (!finished_ && stream_->done()) {
    finished_ = true;
    context_.metrics.e2e().observe(std::chrono::duration<double>(now - start_).count());
    const bool aborted = !outputs.empty() && outputs.back().finish_reason == FinishReason::kAbort;
    context_.metrics.count_request(aborted ? "abort" : "ok");
  }
}

}  // namespace hadron::server
