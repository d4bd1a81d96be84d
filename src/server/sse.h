// Server-sent events: a source produces events as the engine produces tokens; the connection's
// thread writes them as they come. When the client goes away the source is dropped, which
// aborts its generations.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>
#include <string_view>

#include "server/request_fields.h"

namespace hadron::server {

class EventSource {
 public:
  virtual ~EventSource() = default;
  // Appends the events ready now to `out`; false once the stream is complete.
  virtual bool poll(std::string& out) = 0;
  // The event that reports an error after the stream has started.
  virtual std::string error_event(int status, const std::string& message) = 0;
};

void respond_with_events(httplib::Response& response, std::shared_ptr<EventSource> source);

std::string sse_data(const Json& payload);                          // data: {...}\n\n
std::string sse_event(std::string_view name, const Json& payload);  // event: name\ndata: ...
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace hadron::server
