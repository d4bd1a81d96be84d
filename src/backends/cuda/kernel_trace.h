// Records every kernel the GPU runs between kernel_trace_start() and kernel_trace_stop(), and
// every memory copy and memset (named "[memcpy HtoD]" etc.), with its own start and end times,
// through CUPTI's activity API: kernels replayed from CUDA graphs included, at their real in-graph
// times (the per-kernel benchmarks time kernels one at a time, which shows neither the gaps between
// them nor what programmatic dependent launch overlaps). Built only where CUDA's CUPTI library is
// found (HADRON_HAVE_CUPTI); elsewhere both calls throw.
#pragma once

#include <vector>

#include "core/kernel_timeline.h"

namespace hadron::cuda {

// Whether this build can trace.
bool kernel_trace_available();

// Starts collecting (call before the work to trace is captured into graphs or launched).
void kernel_trace_start();

// Waits for the device, stops collecting and returns the kernels that started in
// [from_ns, to_ns] of kernel_trace_now_ns()'s clock, with short names (short_kernel_name).
std::vector<KernelSpan> kernel_trace_stop(uint64_t from_ns, uint64_t to_ns);

// The tracer's clock (CUPTI's timestamp), to mark the window to keep.
uint64_t kernel_trace_now_ns();

}  // namespace hadron::cuda
