#include "engine/async_engine.h"

#include <cstdio>

#include "core/error.h"

namespace hadron {

std::optional<std::string> RequestStream::wait_accepted() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return decided_; });
  return rejection_;
}

std::vector<RequestOutput> RequestStream::wait_outputs(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, timeout,
               [&] { return !pending_.empty() || n_remaining_ == 0 || failure_.has_value(); });
  std::vector<RequestOutput> out;
  out.swap(pending_);
  return out;
}

bool RequestStream::done() {
  std::lock_guard lock(mutex_);
  return (n_remaining_ == 0 || failure_.has_value()) && pending_.empty();
}

std::optional<std::string> RequestStream::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

void RequestStream::accept() {
  std::lock_guard lock(mutex_);
  decided_ = true;
  cv_.notify_all();
}

void RequestStream::reject(std::string reason) {
  std::lock_guard lock(mutex_);
  decided_ = true;
  rejection_ = std::move(reason);
  n_remaining_ = 0;
  cv_.notify_all();
}

void RequestStream::push(RequestOutput output) {
  std::lock_guard lock(mutex_);
  if (output.finished && n_remaining_ > 0) --n_remaining_;
  pending_.push_back(std::move(output));
  cv_.notify_all();
}

void RequestStream::fail(std::string message) {
  std::lock_guard lock(mutex_);
  decided_ = true;
  failure_ = std::move(message);
  cv_.notify_all();
}

void RequestStream::close() {
  std::lock_guard lock(mutex_);
  n_remaining_ = 0;
  cv_.notify_all();
}

int RequestStream::n_remaining() {
  std::lock_guard lock(mutex_);
  return n_remaining_;
}

AsyncEngine::AsyncEngine(Engine& engine, AsyncEngineOptions options)
    : engine_(engine), options_(options), thread_([this] { loop(); }) {}

AsyncEngine::~AsyncEngine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  thread_.join();
}

std::shared_ptr<RequestStream> AsyncEngine::submit(std::vector<int32_t> prompt,
                                                   SamplingParams params, uint64_t cache_salt) {
  std::lock_guard lock(mutex_);
  if (fatal_error_) throw Error("the engine stopped after an internal error: " + *fatal_error_);
  if (stopping_) throw QueueFullError("the server is shutting down");
  if (n_unfinished_ >= options_.max_queued_requests)
    throw QueueFullError(
        fmt::format("{} requests are already queued or running; retry later", n_unfinished_));
  auto stream = std::make_shared<RequestStream>(next_request_id_++, params.n);
  ++n_unfinished_;
  submissions_.push_back({stream, std::move(prompt), std::move(params), cache_salt});
  cv_.notify_all();
  return stream;
}

void AsyncEngine::abort(uint64_t request_id) {
  std::lock_guard lock(mutex_);
  aborts_.push_back(request_id);
  cv_.notify_all();
}

EngineStats AsyncEngine::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

size_t AsyncEngine::n_unfinished() const {
  std::lock_guard lock(mutex_);
  return n_unfinished_;
}

std::optional<std::string> AsyncEngine::fatal_error() const {
  std::lock_guard lock(mutex_);
  return fatal_error_;
}

void AsyncEngine::release(uint64_t request_id) {
  streams_.erase(request_id);
  std::lock_guard lock(mutex_);
  --n_unfinished_;
}

void AsyncEngine::admit(std::deque<Submission>& submissions, std::vector<uint64_t>& aborts) {
  for (Submission& s : submissions) {
    const uint64_t id = s.stream->request_id();
    try {
      engine_.add_request(id, std::move(s.prompt), s.params, s.cache_salt);
    } catch (const InputError& e) {
      {
        std::lock_guard lock(mutex_);
        --n_unfinished_;  // before the submitter hears of it, so it may submit again at once
      }
      s.stream->reject(e.what());
      continue;
    }
    streams_.emplace(id, s.stream);
    s.stream->accept();
  }
  for (uint64_t id : aborts) {
    engine_.abort_request(id);
    dispatch(engine_.take_aborted());
    // Completions that never started (siblings of an aborted prefill) finish here too.
    if (auto it = streams_.find(id); it != streams_.end()) {
      const std::shared_ptr<RequestStream> stream = it->second;
      release(id);
      stream->close();
    }
  }
}

void AsyncEngine::dispatch(std::vector<RequestOutput> outputs) {
  for (RequestOutput& out : outputs) {
    auto it = streams_.find(out.request_id);
    if (it == streams_.end()) continue;  // aborted earlier
    const std::shared_ptr<RequestStream> stream = it->second;
    // Released before the reader can see the end, so it may submit again at once.
    if (out.finished && stream->n_remaining() == 1) release(stream->request_id());
    stream->push(std::move(out));
  }
}

void AsyncEngine::fail_all(const std::string& message) {
  std::lock_guard lock(mutex_);
  fatal_error_ = message;
  for (auto& [id, stream] : streams_) stream->fail(message);
  for (Submission& s : submissions_) s.stream->fail(message);
  streams_.clear();
  submissions_.clear();
  n_unfinished_ = 0;
}

void AsyncEngine::loop() {
  try {
    while (true) {
      std::deque<Submission> submissions;
      std::vector<uint64_t> aborts;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] {
          return stopping_ || !submissions_.empty() || !aborts_.empty() || engine_.has_unfinished();
        });
        if (stopping_) break;
        submissions.swap(submissions_);
        aborts.swap(aborts_);
      }
      admit(submissions, aborts);
      if (engine_.has_unfinished()) dispatch(engine_.step());
      const EngineStats stats = engine_.stats();
      std::lock_guard lock(mutex_);
      stats_ = stats;
    }
    fail_all("the engine stopped");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine loop: internal error: %s\n", e.what());
    fail_all(e.what());
  }
}

}  // namespace hadron
