// Work a backend queues asynchronously: events marking a point in its queue and graphs of
// captured work replayed later. The model runner uses them to overlap host work (scheduling,
// postprocessing) with the device's, and to replay decode steps as one launch. Backends that
// run synchronously (CPU) finish every call before returning: their events are complete at
// once and they capture no graphs.
#pragma once

#include <functional>
#include <memory>

namespace hadron {

// A point in a backend's queue of work.
class DeviceEvent {
 public:
  virtual ~DeviceEvent() = default;
  // Blocks until the work queued before the event is done.
  virtual void wait() = 0;
};

// Device work recorded once and replayed with the same pointers: the inputs it reads are
// refreshed in place (by copies queued before replay), never moved.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  virtual void replay() = 0;
};

// The event of a synchronous backend: already complete.
class CompletedEvent final : public DeviceEvent {
 public:
  void wait() override {}
};

using CaptureFn = std::function<void()>;

}  // namespace hadron
