// The HTTP front end: routes, authentication, error bodies, limits and lifecycle. Handlers run
// on one thread per connection; the engine runs on its own loop thread (AsyncEngine).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "server/server_context.h"

namespace httplib {
class Server;
}

namespace hadron::server {

struct HttpOptions {
  std::string host = "0.0.0.0";
  int port = 8000;
  size_t max_connections = 4096;  // connection threads; more connections wait to be accepted
  int listen_backlog = 4096;
};

class HttpServer {
 public:
  HttpServer(ServerContext& context, HttpOptions options);
  ~HttpServer();

  // Binds and starts serving on a background thread, returning once it accepts connections;
  // InputError when the address is taken.
  void start();
  int port() const { return port_; }
  // Stops accepting connections and waits for the open ones to finish.
  void stop();

 private:
  void add_routes();

  ServerContext& context_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listener_returned_ = false;  // httplib's listen loop has ended
  int port_ = 0;
};

}  // namespace hadron::server
