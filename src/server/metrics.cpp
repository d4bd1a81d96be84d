#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace hadron::server {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  std::lock_guard lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

std::string Histogram::render(const std::string& name, const std::string& help) const {
  std::lock_guard lock(mutex_);
  std::string out = fmt::format("# HELP {0} {1}\n# TYPE {0} histogram\n", name, help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, count_);
  out += fmt::format("{}_sum {}\n{}_count {}\n", name, sum_, name, count_);
  return out;
}

Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
             20, 40, 80}),
      inter_token_({0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
                    0.075, 0.1,    0.15,  0.2,  0.3,   0.4,  0.5,   0.75, 1,    2.5}),
      e2e_({0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480}) {}

namespace {

template <typename Key>
void increment(std::vector<std::pair<Key, uint64_t>>& counters, const Key& key) {
  for (auto& [name, count] : counters) {
    if (name == key) {
      ++count;
      return;
    }
  }
  counters.emplace_back(key, 1);
}

// The prefix cache's host and disk tiers (ADR 0012): per tier and per transfer direction.
std::string render_offload(const OffloadStats& stats, const std::string& label) {
  std::string out;
  const std::pair<const char*, const OffloadTierStats*> tiers[] = {{"host", &stats.host},
                                                                   {"disk", &stats.disk}};
  const auto per_tier = [&](const char* name, const char* help, const char* type, auto field) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
    for (const auto& [tier, s] : tiers)
      out += fmt::format("{}{{{},tier=\"{}\"}} {}\n", name, label, tier, field(*s));
  };
  per_tier("hadron_kv_offload_capacity_blocks", "KV blocks the tier can hold.", "gauge",
           [](const OffloadTierStats& s) { return s.capacity_blocks; });
  per_tier("hadron_kv_offload_blocks", "KV blocks the tier holds.", "gauge",
           [](const OffloadTierStats& s) { return s.blocks; });
  per_tier("hadron_kv_offload_bytes", "Bytes the tier's blocks take.", "gauge",
           [](const OffloadTierStats& s) { return s.bytes; });
  per_tier("hadron_kv_offload_stored_blocks_total", "KV blocks written into the tier.", "counter",
           [](const OffloadTierStats& s) { return s.stored_blocks; });
  per_tier("hadron_kv_offload_hit_blocks_total",
           "Prefix-cache blocks served from the tier to the device.", "counter",
           [](const OffloadTierStats& s) { return s.hit_blocks; });
  per_tier("hadron_kv_offload_dropped_blocks_total",
           "Blocks dropped for a failed write or integrity check (recomputed).", "counter",
           [](const OffloadTierStats& s) { return s.dropped_blocks; });
  const std::tuple<const char*, int64_t, double> moves[] = {
      {"device_to_host", stats.host.write_bytes, stats.host.write_seconds},
      {"host_to_device", stats.host.read_bytes, stats.host.read_seconds},
      {"host_to_disk", stats.disk.write_bytes, stats.disk.write_seconds},
      {"disk_to_host", stats.disk.read_bytes, stats.disk.read_seconds}};
  for (const bool seconds : {false, true}) {
    const char* name = seconds ? "hadron_kv_offload_transfer_seconds_total"
                               : "hadron_kv_offload_transfer_bytes_total";
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n", name,
                       seconds ? "Time spent moving KV blocks between tiers."
                               : "Bytes of KV blocks moved between tiers.");
    for (const auto& [direction, bytes, time] : moves)
      out += seconds ? fmt::format("{}{{{},direction=\"{}\"}} {}\n", name, label, direction, time)
                     : fmt::format("{}{{{},direction=\"{}\"}} {}\n", name, label, direction, bytes);
  }
  return out;
}

}  // namespace

void Metrics::count_request(const std::string& outcome) {
  std::lock_guard lock(mutex_);
  increment(requests_, outcome);
}

void Metrics::count_http(int status) {
  std::lock_guard lock(mutex_);
  increment(http_, status);
}

namespace {

// Speculative decoding's counters (vLLM's spec_decode metrics) and the k of the last step.
void render_spec(const SpecStats& spec, const std::string& label, std::string& out) {
  const auto line = [&](const char* name, const char* help, const char* type, int64_t value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0}{{{3}}} {4}\n", name, help, type, label,
                       value);
  };
  line("hadron_spec_decode_num_drafts_total", "Sequence steps that verified a draft.", "counter",
       spec.n_drafts);
  line("hadron_spec_decode_num_draft_tokens_total", "Draft tokens verified.", "counter",
       spec.n_draft_tokens);
  line("hadron_spec_decode_num_accepted_tokens_total", "Draft tokens accepted.", "counter",
       spec.n_accepted_tokens);
  out +=
      "# HELP hadron_spec_decode_num_accepted_tokens_per_pos_total Drafts whose token at this "
      "position was accepted.\n# TYPE hadron_spec_decode_num_accepted_tokens_per_pos_total "
      "counter\n";
  for (size_t i = 0; i < spec.accepted_per_position.size(); ++i)
    out += fmt::format(
        "hadron_spec_decode_num_accepted_tokens_per_pos_total{{{},position=\"{}\"}} {}\n", label, i,
        spec.accepted_per_position[i]);
  line("hadron_spec_decode_k", "Longest draft of the last step (0: speculation off).", "gauge",
       spec.k_in_use);
}

}  // namespace

std::string Metrics::render(const EngineStats& stats, const std::string& model_name) const {
  const std::string label = fmt::format("model_name=\"{}\"", model_name);
  std::string out;
  const auto gauge = [&](const char* name, const char* help, const char* type, double value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0}{{{3}}} {4}\n", name, help, type, label,
                       value);
  };
  {
    std::lock_guard lock(mutex_);
    out +=
        "# HELP hadron_requests_total Generations by how they ended.\n"
        "# TYPE hadron_requests_total counter\n";
    for (const auto& [outcome, count] : requests_)
      out += fmt::format("hadron_requests_total{{{},outcome=\"{}\"}} {}\n", label, outcome, count);
    out +=
        "# HELP hadron_http_requests_total HTTP responses by status code.\n"
        "# TYPE hadron_http_requests_total counter\n";
    for (const auto& [status, count] : http_)
      out +=
          fmt::format("hadron_http_requests_total{{{},status=\"{}\"}} {}\n", label, status, count);
  }
  gauge("hadron_prompt_tokens_total", "Prompt tokens of admitted requests.", "counter",
        static_cast<double>(prompt_tokens_.load()));
  gauge("hadron_generation_tokens_total", "Generated tokens.", "counter",
        static_cast<double>(generation_tokens_.load()));
  gauge("hadron_num_requests_running", "Sequences in the running batch.", "gauge",
        static_cast<double>(stats.n_running));
  gauge("hadron_num_requests_waiting", "Sequences waiting for KV blocks or a batch slot.", "gauge",
        static_cast<double>(stats.n_waiting));
  gauge("hadron_kv_cache_usage_perc", "Fraction of KV-cache blocks in use.", "gauge",
        stats.kv_usage);
  gauge("hadron_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
        "counter", static_cast<double>(stats.prefix_queried_tokens));
  gauge("hadron_prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", "counter",
        static_cast<double>(stats.prefix_hit_tokens));
  gauge("hadron_prefix_cache_hit_rate", "Prefix-cache hits over queries since start.", "gauge",
        stats.prefix_queried_tokens > 0 ? static_cast<double>(stats.prefix_hit_tokens) /
                                              static_cast<double>(stats.prefix_queried_tokens)
                                        : 0.0);
  gauge("hadron_num_preemptions_total", "Sequences preempted for KV blocks.", "counter",
        static_cast<double>(stats.n_preemptions));
  if (stats.offload.enabled) out += render_offload(stats.offload, label);
  if (!stats.spec.accepted_per_position.empty()) render_spec(stats.spec, label, out);
  out += ttft_.render("hadron_time_to_first_token_seconds", "Time to the first token.");
  out += inter_token_.render("hadron_inter_token_latency_seconds", "Time between tokens.");
  out += e2e_.render("hadron_e2e_request_latency_seconds", "Request latency, end to end.");
  return out;
}

}  // namespace hadron::server
