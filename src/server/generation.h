// One prompt's run in the engine as the HTTP thread serving it sees it: submit, then take
// outputs as they come while watching the client; an abandoned or disconnected run is aborted,
// freeing its KV blocks at the engine's next step. Records the request's metrics.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "server/connection.h"
#include "server/server_context.h"

namespace hadron::server {

// Thrown by Generation::next when the client has disconnected (the run is already aborted).
class ClientGone : public std::runtime_error {
 public:
  ClientGone() : std::runtime_error("client disconnected") {}
};

class Generation {
 public:
  // Submits; ApiError 429 when the queue is full, 400 when the engine rejects the request,
  // 503 when it is not running.
  Generation(ServerContext& context, const ClientConnection& client, std::vector<int32_t> prompt,
             SamplingParams params);
  ~Generation();  // aborts the run if it has not finished
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // The next outputs, waiting up to `timeout`; ClientGone when the client left.
  std::vector<RequestOutput> next(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(20));
  bool done() const { return stream_->done(); }
  int64_t n_prompt_tokens() const { return n_prompt_tokens_; }

 private:
  using Clock = std::chrono::steady_clock;
  void observe(const std::vector<RequestOutput>& outputs);

  ServerContext& context_;
  AsyncEngine& engine_;
  const ClientConnection& client_;
  std::shared_ptr<RequestStream> stream_;
  int64_t n_prompt_tokens_ = 0;
  Clock::time_point start_;
  Clock::time_point last_token_;
  Clock::time_point last_client_check_;
  static constexpr std::chrono::milliseconds kClientCheckInterval{20};
  bool first_seen_ = false;
  bool finished_ = false;
};

}  // namespace hadron::server
