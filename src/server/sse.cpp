#include "server/sse.h"

#include "server/api_error.h"
#include "server/generation.h"

namespace hadron::server {

std::string sse_data(const Json& payload) { return "data: " + dump_json(payload) + "\n\n"; }

std::string sse_event(std::string_view name, const Json& payload) {
  return "event: " + std::string(name) + "\ndata: " + dump_json(payload) + "\n\n";
}

void respond_with_events(httplib::Response& response, std::shared_ptr<EventSource> source) {
  response.set_header("Cache-Control", "no-cache");
  response.set_header("X-Accel-Buffering", "no");
  response.set_chunked_content_provider(
      "text/event-stream", [source](size_t, httplib::DataSink& sink) {
        std::string text;
        bool more = true;
        try {
          more = source->poll(text);
        } catch (const ClientGone&) {
          return false;
        } catch (const ApiError& e) {
          text += source->error_event(e.status(), e.what());
          more = false;
        } catch (const std::exception& e) {
          text += source->error_event(500, e.what());
          more = false;
        }
        if (!text.empty() && !sink.write(text.data(), text.size())) return false;
        if (!more) sink.done();
        return true;
      });
}

}  // namespace hadron::server
