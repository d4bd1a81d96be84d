// Prometheus metrics of the server: counters, gauges read at scrape time, and latency
// histograms. Thread-safe; GET /metrics renders them in the text exposition format.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace hadron::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // Lines of the `name` histogram (with _bucket, _sum, _count) in exposition format.
  std::string render(const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket, last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  // A generation by how it ended: ok, abort (client gone or cancelled), error.
  void count_request(const std::string& outcome);
  // An HTTP response by status code.
  void count_http(int status);
  void add_prompt_tokens(int64_t n) { prompt_tokens_ += n; }
  void add_generation_tokens(int64_t n) { generation_tokens_ += n; }
  Histogram& ttft() { return ttft_; }
  Histogram& inter_token() { return inter_token_; }
  Histogram& e2e() { return e2e_; }

  std::string render(const EngineStats& stats, const std::string& model_name) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, uint64_t>> requests_;  // outcome -> count
  std::vector<std::pair<int, uint64_t>> http_;              // status -> count
  std::atomic<int64_t> prompt_tokens_{0};
  std::atomic<int64_t> generation_tokens_{0};
  Histogram ttft_;
  Histogram inter_token_;
  Histogram e2e_;
};

}  // namespace hadron::server
