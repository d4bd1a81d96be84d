#include "server/connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <string>
#include <thread>

namespace hadron::server {
namespace {

// Address and port of a socket name, as httplib writes them in Request.
bool same_endpoint(const sockaddr_storage& addr, const std::string& host, int port) {
  char text[INET6_ADDRSTRLEN] = {};
  int actual_port = -1;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    actual_port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    actual_port = ntohs(in6->sin6_port);
  } else {
    return false;
  }
  return actual_port == port && host == text;
}

bool is_connection_of(int fd, const httplib::Request& request) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return false;
  return same_endpoint(local, request.local_addr, request.local_port) &&
         same_endpoint(peer, request.remote_addr, request.remote_port);
}

}  // namespace

ClientConnection::ClientConnection(const httplib::Request& request) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || end == entry->d_name) continue;
    if (is_connection_of(static_cast<int>(fd), request)) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
}

bool ClientConnection::closed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  // Readable: a pipelined next request, or the end of the stream.
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

ConnectionThreads::~ConnectionThreads() { shutdown(); }

void ConnectionThreads::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  if (n_threads_ >= max_threads_) {
    queue_.push_back(std::move(fn));
    return;
  }
  ++n_threads_;
  std::thread([this, fn = std::move(fn)]() mutable { run(std::move(fn)); }).detach();
}

void ConnectionThreads::run(std::function<void()> fn) {
  while (true) {
    fn();
    std::lock_guard lock(mutex_);
    if (queue_.empty()) {
      --n_threads_;
      idle_.notify_all();
      return;
    }
    fn = std::move(queue_.front());
    queue_.pop_front();
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return n_threads_ == 0; });
}

}  // namespace hadron::server
