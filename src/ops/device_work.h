// Work a backend queues asynchronously: events marking a point in its queue and graphs of
// captured work replayed later. The model runner uses them to overlap host work (scheduling,
// postprocessing) with the device's, and to replay decode steps as one launch. Backends that
// run synchronously (CPU) finish every call before returning: their events are complete at
// once and they capture no graphs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/tensor.h"

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

// Where queued steps take their inputs from and put their sampled tokens, without a copy
// between one step's work and the next's (Backend::begin_step, end_step). Steps take turns
// 0, 1, 2, ...; turn n uses images[n & 1] and tokens[n & 1].
struct StepStaging {
  // The image the host writes for a turn: kHeaderBytes of header (the turn number, uint32, in
  // its first word), then the bytes the device inputs receive.
  static constexpr int64_t kHeaderBytes = 16;
  Tensor images[2];  // U8, host memory from Backend::allocate_host
  Tensor tokens[2];  // I32 [R], host memory from Backend::allocate_host
  Tensor counter;    // I32 [2] on the backend's device, zero at first: turns begun, scratch
};

// Throw unless the operands of Backend::begin_step / end_step have the layouts those ops
// describe (every backend's checks; a backend adds where its memory must be).
void check_begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                      const Tensor& sampled);
void check_end_step(const StepStaging& staging, const Tensor& sampled);

}  // namespace hadron
