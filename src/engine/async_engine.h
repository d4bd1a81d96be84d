// AsyncEngine: the Engine driven by one loop thread, fed by any number of caller threads (the
// HTTP server's). Callers submit a request and read its outputs from a RequestStream; the loop
// admits new requests and aborts between steps, so an abort frees KV blocks before the next step.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"

namespace hadron {

// Thrown by submit() when the queue of unfinished requests is full (the server's 429).
class QueueFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Outputs of one request, in order, from the loop thread to one reader.
class RequestStream {
 public:
  RequestStream(uint64_t request_id, int n) : request_id_(request_id), n_remaining_(n) {}

  uint64_t request_id() const { return request_id_; }

  // Blocks until the loop has accepted or rejected the request. Empty when accepted, else the
  // reason (an InputError's message: the request was invalid).
  std::optional<std::string> wait_accepted();
  // Waits up to `timeout` for outputs and returns those that arrived (possibly none).
  std::vector<RequestOutput> wait_outputs(std::chrono::milliseconds timeout);
  // True once every completion of the request has finished and its outputs were taken.
  bool done();
  // Set when the engine failed while running this request (an internal error).
  std::optional<std::string> failure();

  // Loop side.
  void accept();
  void reject(std::string reason);
  void push(RequestOutput output);
  void fail(std::string message);
  void close();       // finishes the stream whatever completions remain (after an abort)
  int n_remaining();  // completions not yet finished

 private:
  const uint64_t request_id_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool decided_ = false;
  std::optional<std::string> rejection_;
  std::optional<std::string> failure_;
  std::vector<RequestOutput> pending_;
  int n_remaining_;  // completions not yet finished
};

struct AsyncEngineOptions {
  size_t max_queued_requests = 4096;  // unfinished requests (waiting and running) at most
};

class AsyncEngine {
 public:
  AsyncEngine(Engine& engine, AsyncEngineOptions options);
  ~AsyncEngine();  // stops the loop; unfinished requests fail
  AsyncEngine(const AsyncEngine&) = delete;
  AsyncEngine& operator=(const AsyncEngine&) = delete;

  // Queues a request; throws QueueFullError when max_queued_requests are unfinished.
  std::shared_ptr<RequestStream> submit(std::vector<int32_t> prompt, SamplingParams params,
                                        uint64_t cache_salt = 0);
  // Aborts a request (its stream gets outputs finished with reason abort).
  void abort(uint64_t request_id);
  // The engine's statistics after the last step.
  EngineStats stats() const;
  size_t n_unfinished() const;
  // Set when the loop died on an internal error; every later submit fails.
  std::optional<std::string> fatal_error() const;

 private:
  struct Submission {
    std::shared_ptr<RequestStream> stream;
    std::vector<int32_t> prompt;
    SamplingParams params;
    uint64_t cache_salt;
  };

  void loop();
  void admit(std::deque<Submission>& submissions, std::vector<uint64_t>& aborts);
  void dispatch(std::vector<RequestOutput> outputs);
  void release(uint64_t request_id);  // the request is over: forget its stream
  void fail_all(const std::string& message);

  Engine& engine_;
  AsyncEngineOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Submission> submissions_;
  std::vector<uint64_t> aborts_;
  std::unordered_map<uint64_t, std::shared_ptr<RequestStream>> streams_;  // loop-owned
  size_t n_unfinished_ = 0;
  uint64_t next_request_id_ = 1;
  bool stopping_ = false;
  std::optional<std::string> fatal_error_;
  EngineStats stats_;
  std::thread thread_;
};

}  // namespace hadron
