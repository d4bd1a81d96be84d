// LibraryEngine: what a hadron_engine handle holds. A loaded model, its tokenizer and chat
// template, the Engine on an AsyncEngine loop thread, and the requests an embedder has added
// and not yet read to their end. Every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "capi/library_options.h"
#include "capi/request_json.h"
#include "engine/async_engine.h"
#include "engine/tokenizer_detokenizer.h"
#include "server/server_context.h"

namespace hadron::capi {

// A request id that is not (or no longer) known.
class NotFoundError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The engine failed while running a request (an internal error).
class EngineFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PolledOutput {
  RequestOutput output;
  bool last = false;  // the request's final output: it is forgotten now
};

class LibraryEngine {
 public:
  explicit LibraryEngine(const LibraryOptions& options);
  ~LibraryEngine();  // stops the loop; unfinished requests end

  // Queues a request after validating its sampling JSON; returns its id. ApiError or
  // InputError on bad input, QueueFullError when the queue is full.
  uint64_t add(std::vector<int32_t> prompt, std::string_view sampling_json);
  std::vector<int32_t> encode(const std::string& text, bool add_special_tokens) const;
  // Chat messages (OpenAI's JSON array) rendered with the model's template.
  std::string render_chat(std::string_view messages_json) const;

  // The request's next output, waiting up to `timeout` (negative: no limit); nullopt when none
  // came. NotFoundError for an unknown or finished request, EngineFailure when the engine died.
  std::optional<PolledOutput> poll(uint64_t request_id, std::chrono::milliseconds timeout);
  void abort(uint64_t request_id);  // NotFoundError when unknown
  nlohmann::json metrics() const;

 private:
  struct Request {
    std::shared_ptr<RequestStream> stream;
    std::mutex mutex;  // one poller at a time
    std::deque<RequestOutput> pending;
  };

  std::shared_ptr<Request> find(uint64_t request_id);
  void forget(uint64_t request_id);

  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<TokenizerDetokenizer> detokenizer_;
  server::ServedModel served_;
  server::RequestLimits limits_;
  std::unique_ptr<LoadedModel> model_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<AsyncEngine> async_engine_;  // after engine_: stopped before it is destroyed
  std::mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<Request>> requests_;
  std::atomic<int64_t> n_prompt_tokens_ = 0;
  std::atomic<int64_t> n_generation_tokens_ = 0;
  std::atomic<int64_t> n_finished_requests_ = 0;
};

}  // namespace hadron::capi
