// The client's TCP connection behind an HTTP request, so a request can notice its client has
// gone (and be aborted) while it waits for the engine; and the server's per-connection threads.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace hadron::server {

class ClientConnection {
 public:
  // Finds the socket of `request` (matching its local and remote address and port).
  explicit ClientConnection(const httplib::Request& request);
  // True once the peer has closed its side (FIN or RST). False when the socket is unknown.
  bool closed() const;

 private:
  int fd_ = -1;
};

// One thread per connection, started on demand, up to `max_threads`; connections beyond that
// wait in a queue. (httplib's fixed pool would let a few slow streams block every other client.)
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;  // waits for every connection to finish

 private:
  void run(std::function<void()> fn);

  size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> queue_;
  size_t n_threads_ = 0;
};

}  // namespace hadron::server
