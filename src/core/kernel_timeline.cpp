#include "core/kernel_timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>

namespace hadron {

KernelTimeline summarise_kernels(std::vector<KernelSpan> spans) {
  KernelTimeline timeline;
  if (spans.empty()) return timeline;
  std::sort(spans.begin(), spans.end(),
            [](const KernelSpan& a, const KernelSpan& b) { return a.start_ns < b.start_ns; });
  struct Sums {
    int64_t count = 0;
    double duration_ns = 0, share_ns = 0;
  };
  std::map<std::string, Sums> by_name;
  std::map<std::pair<std::string, std::string>, IdleGap> gaps;
  uint64_t latest_end = spans.front().start_ns;
  const std::string* latest = &spans.front().name;  // the span that ended at latest_end
  for (const KernelSpan& span : spans) {
    const uint64_t end = std::max(span.end_ns, span.start_ns);
    if (span.start_ns > latest_end) {
      IdleGap& gap = gaps[{*latest, span.name}];
      ++gap.count;
      gap.total_us += static_cast<double>(span.start_ns - latest_end) / 1e3;
    }
    Sums& sums = by_name[span.name];
    ++sums.count;
    sums.duration_ns += static_cast<double>(end - span.start_ns);
    // In start order, the part of this span past every earlier end: the union of the spans
    // grows by exactly this much.
    if (end > latest_end) {
      const double share = static_cast<double>(end - std::max(span.start_ns, latest_end));
      sums.share_ns += share;
      timeline.busy_us += share / 1e3;
      latest_end = end;
      latest = &span.name;
    }
  }
  timeline.wall_us = static_cast<double>(latest_end - spans.front().start_ns) / 1e3;
  for (const auto& [name, sums] : by_name)
    timeline.kernels.push_back({name, sums.count,
                                sums.duration_ns / 1e3 / static_cast<double>(sums.count),
                                sums.share_ns / 1e3});
  std::sort(timeline.kernels.begin(), timeline.kernels.end(),
            [](const KernelStats& a, const KernelStats& b) { return a.share_us > b.share_us; });
  for (auto& [names, gap] : gaps) {
    gap.before = names.first;
    gap.after = names.second;
    timeline.idle.push_back(gap);
  }
  std::sort(timeline.idle.begin(), timeline.idle.end(),
            [](const IdleGap& a, const IdleGap& b) { return a.total_us > b.total_us; });
  return timeline;
}

std::string format_kernel_timeline(const KernelTimeline& timeline, int64_t steps) {
  const double per = 1.0 / static_cast<double>(std::max<int64_t>(steps, 1));
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line,
                "per step (%lld steps): wall %.1f us, kernels running %.1f us, idle %.1f us\n"
                "share: how far a kernel moves the end of the work past the latest end before "
                "it (the shares add up to the running time)\n",
                static_cast<long long>(steps), timeline.wall_us * per, timeline.busy_us * per,
                (timeline.wall_us - timeline.busy_us) * per);
  text += line;
  std::snprintf(line, sizeof line, "%-60s %7s %9s %11s %10s\n", "kernel", "n/step", "mean us",
                "share/launch", "share/step");
  text += line;
  for (const KernelStats& k : timeline.kernels) {
    std::snprintf(line, sizeof line, "%-60.60s %7.1f %9.2f %11.2f %10.1f\n", k.name.c_str(),
                  static_cast<double>(k.count) * per, k.mean_us,
                  k.share_us / static_cast<double>(k.count), k.share_us * per);
    text += line;
  }
  constexpr size_t kGapsShown = 5;
  if (!timeline.idle.empty())
    text += "idle gaps (us per step, n/step): the kernel before a gap -> the kernel after it\n";
  for (size_t i = 0; i < std::min(timeline.idle.size(), kGapsShown); ++i) {
    const IdleGap& gap = timeline.idle[i];
    std::snprintf(line, sizeof line, "%9.1f %5.1f  %.60s -> %.60s\n", gap.total_us * per,
                  static_cast<double>(gap.count) * per, gap.before.c_str(), gap.after.c_str());
    text += line;
  }
  return text;
}

std::string short_kernel_name(const std::string& demangled) {
  // Drop the parameter list: the first "(" outside template arguments that does not open
  // "(anonymous namespace)".
  std::string name = demangled;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == '(' && depth == 0 && name.compare(i, 21, "(anonymous namespace)") != 0) {
      name.resize(i);
      break;
    }
  }
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);  // the return type
  // Drop every namespace qualifier, template arguments' included.
  static const std::regex qualifier(R"((\(anonymous namespace\)|[A-Za-z_][A-Za-z0-9_]*)::)");
  name = std::regex_replace(name, qualifier, "");
  return name.empty() ? demangled : name;
}

}  // namespace hadron
