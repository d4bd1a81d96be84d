// The one place that knows which backends this build has: the app asks it for a backend by
// device name and hands that to the engine, which includes no backend header itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/kernel_timeline.h"
#include "ops/backend.h"

namespace hadron {

// The backend for `device`: "cpu", "cuda" or "auto" (CUDA when a GPU is visible, else the CPU).
// Throws InputError when this build or machine has no such device.
std::unique_ptr<Backend> make_backend(const std::string& device);

// Records the kernels the GPU runs (backends/cuda/kernel_trace.h says how).
class KernelTracer {
 public:
  virtual ~KernelTracer() = default;
  // Starts collecting (before the work to trace is captured into graphs or launched).
  virtual void start() = 0;
  // Waits for the device, stops and returns the kernels that started in [from_ns, to_ns].
  virtual std::vector<KernelSpan> stop(uint64_t from_ns, uint64_t to_ns) = 0;
  // The tracer's clock, to mark the window to keep.
  virtual uint64_t now_ns() = 0;
};

// A kernel tracer; null where this build cannot trace (no CUDA backend, or no CUPTI).
std::unique_ptr<KernelTracer> make_kernel_tracer();

}  // namespace hadron
