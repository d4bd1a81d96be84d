// Where a GPU step's time goes, from the kernels' own start and end times (as a tracer such as
// CUPTI records them, kernels replayed from CUDA graphs included). Under programmatic dependent
// launch a kernel starts early and waits for its predecessor, so its duration says little; what
// it costs is how far it moves the end of the work: each launch is credited with the time by
// which its end passed the latest end before it, excluding time no kernel ran. These shares add
// up to the time kernels ran; the rest of the wall time is idle. Isolated kernel timings show
// neither.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hadron {

struct KernelSpan {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
};

struct KernelStats {
  std::string name;
  int64_t count = 0;
  double mean_us = 0;   // mean duration, including any wait for its predecessor
  double share_us = 0;  // summed over launches: how far each moved the latest end (see above)
};

// Time no kernel ran, between the kernel whose end was the latest before the gap and the kernel
// that starts after it (e.g. a step's input copies and graph launch, between its last kernel and
// the next step's first).
struct IdleGap {
  std::string before, after;
  int64_t count = 0;
  double total_us = 0;
};

struct KernelTimeline {
  std::vector<KernelStats> kernels;  // by share_us, largest first
  std::vector<IdleGap> idle;         // by total_us, largest first
  double wall_us = 0;                // first start to last end
  double busy_us = 0;                // time at least one kernel ran (the shares' sum)
};

KernelTimeline summarise_kernels(std::vector<KernelSpan> spans);

// The timeline as a table per step (totals divided by `steps`), then the largest idle gaps, for
// people.
std::string format_kernel_timeline(const KernelTimeline& timeline, int64_t steps);

// "void ns::(anonymous namespace)::kernel<128, true>(Args, float*)" -> "kernel<128, true>":
// demangled names without return type, namespaces and parameters.
std::string short_kernel_name(const std::string& demangled);

}  // namespace hadron
