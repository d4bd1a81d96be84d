#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "server/api_error.h"
#include "server/connection.h"
#include "server/generation.h"
#include "server/handlers.h"
#include "server/sse.h"

namespace hadron::server {
namespace {

using Handler = void (*)(ServerContext&, const httplib::Request&, httplib::Response&);

bool is_anthropic(const httplib::Request& request) { return request.path == "/v1/messages"; }

void write_error(const httplib::Request& request, httplib::Response& response, const ApiError& e) {
  response.status = e.status();
  Json body;
  if (is_anthropic(request)) {
    body = {{"type", "error"}, {"error", {{"type", e.type()}, {"message", e.what()}}}};
  } else {
    body = {{"error",
             {{"message", e.what()},
              {"type", e.type()},
              {"param", e.param().empty() ? Json(nullptr) : Json(e.param())},
              {"code", e.code().empty() ? Json(e.status()) : Json(e.code())}}}};
  }
  response.set_content(dump_json(body), "application/json");
}

void check_api_key(const ServerContext& context, const httplib::Request& request) {
  if (context.api_key.empty()) return;
  const std::string bearer = request.get_header_value("Authorization");
  const std::string key = request.get_header_value("x-api-key");
  if (bearer == "Bearer " + context.api_key || key == context.api_key) return;
  throw ApiError(401, "a valid API key is required (Authorization: Bearer KEY)", "",
                 "invalid_api_key");
}

// Runs a handler with the errors every endpoint shares turned into responses. model_api: the
// route needs the API key and the loaded model; while the model loads it answers 503 (what the
// server knows of the model, such as its vocabulary and context sizes, is set when the load
// ends).
httplib::Server::Handler guarded(ServerContext& context, Handler handler, bool model_api) {
  return
      [&context, handler, model_api](const httplib::Request& request, httplib::Response& response) {
        try {
          if (model_api) {
            check_api_key(context, request);
            if (context.engine.load() == nullptr) throw ApiError(503, "the model is still loading");
          }
          handler(context, request, response);
        } catch (const ApiError& e) {
          write_error(request, response, e);
        } catch (const ClientGone&) {
          response.status = 499;  // nobody is listening; the run is already aborted
        } catch (const InputError& e) {
          write_error(request, response, ApiError(400, e.what()));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "error: %s %s: %s\n", request.method.c_str(), request.path.c_str(),
                       e.what());
          write_error(request, response, ApiError(500, e.what()));
        }
      };
}

}  // namespace

HttpServer::HttpServer(ServerContext& context, HttpOptions options)
    : context_(context),
      options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  const size_t max_connections = options_.max_connections;
  server_->new_task_queue = [max_connections] { return new ConnectionThreads(max_connections); };
  server_->set_payload_max_length(context_.limits.max_body_bytes);
  server_->set_keep_alive_max_count(1000);
  server_->set_read_timeout(60);
  server_->set_write_timeout(60);
  add_routes();
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::add_routes() {
  httplib::Server& s = *server_;
  ServerContext& c = context_;
  s.Post("/v1/completions", guarded(c, handle_completions, true));
  s.Post("/v1/chat/completions", guarded(c, handle_chat_completions, true));
  s.Post("/v1/messages", guarded(c, handle_messages, true));
  s.Post("/tokenize", guarded(c, handle_tokenize, true));
  s.Post("/detokenize", guarded(c, handle_detokenize, true));
  s.Get("/v1/models", guarded(c, handle_models, true));
  s.Get("/health", guarded(c, handle_health, false));
  s.Get("/version", guarded(c, handle_version, false));
  s.Get("/metrics", guarded(c, handle_metrics, false));
  s.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty() || response.status == 499) return;
    const int status = response.status;
    const std::string message =
        status == 404   ? fmt::format("no route for {} {}", request.method, request.path)
        : status == 413 ? std::string("the request body is too large")
                        : fmt::format("HTTP error {}", status);
    write_error(request, response, ApiError(status, message));
  });
  s.set_logger([&c](const httplib::Request&, const httplib::Response& response) {
    c.metrics.count_http(response.status);
  });
}

void HttpServer::start() {
  int listen_fd = -1;
  // SO_REUSEADDR only (a restart may bind while old connections sit in TIME_WAIT): httplib's
  // defaults add SO_REUSEPORT, with which a second server binds a port already served and the
  // kernel splits the connections between the two.
  server_->set_socket_options([&listen_fd](int fd) {
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = fd;
  });
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
    if (port_ < 0) input_error("cannot listen on {}", options_.host);
  } else if (server_->bind_to_port(options_.host, options_.port)) {
    port_ = options_.port;
  } else {
    input_error("cannot listen on {}:{} (in use, or not an address here)", options_.host,
                options_.port);
  }
  // httplib listens with a backlog of 5; many clients connecting at once need more.
  if (listen_fd >= 0) ::listen(listen_fd, options_.listen_backlog);
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listener_returned_ = true;
  });
  // Until httplib's listener runs, Server::stop() does nothing: a stop() before then (the model
  // failing to load right after start()) would leave the listener in accept() and stop()'s join
  // waiting for it forever.
  while (!server_->is_running() && !listener_returned_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void HttpServer::stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace hadron::server
