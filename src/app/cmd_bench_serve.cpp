// hadron bench serve: random token-id prompts of --input-len, --output-len tokens each
// (ignore_eos), streamed from /v1/completions at --request-rate (Poisson arrivals) with at most
// --max-concurrency in flight. Reports TTFT, TPOT, ITL and end-to-end latency (mean, p50, p90,
// p99) and request / token throughput, as vLLM's benchmark_serving does.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "app/bench_serve.h"
#include "core/error.h"

namespace hadron::app {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct ServeBenchArgs {
  std::string url = "http://127.0.0.1:8000";
  std::string model;  // empty: the first of /v1/models
  int64_t num_prompts = 1000;
  double request_rate = INFINITY;
  int64_t max_concurrency = 0;  // 0: no limit
  int64_t input_len = 1000;
  int64_t output_len = 1000;
  int32_t token_id_low = 10, token_id_high = 1000;  // prompt ids drawn from [low, high]
  uint64_t seed = 0;
  bool json = false;
};

struct RequestResult {
  bool ok = false;
  std::string error;
  double ttft = 0, e2e = 0;
  std::vector<double> itl;  // gaps between streamed chunks
  int64_t output_tokens = 0;
};

// Reads SSE text as it arrives; records when each chunk with text came.
class SseTimer {
 public:
  explicit SseTimer(Clock::time_point start) : start_(start), last_(start) {}

  bool feed(const char* data, size_t n, RequestResult& result) {
    buffer_.append(data, n);
    for (size_t end; (end = buffer_.find("\n\n")) != std::string::npos;) {
      const std::string event = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      if (!event.starts_with("data: ") || event == "data: [DONE]") continue;
      const Json chunk = Json::parse(event.substr(6), nullptr, false);
      if (chunk.is_discarded()) continue;
      if (chunk.contains("error")) result.error = chunk["error"].dump();
      if (chunk.contains("usage") && chunk["usage"].is_object())
        result.output_tokens = chunk["usage"].value("completion_tokens", int64_t{0});
      // A chunk that carries tokens (by their ids, which every model has, or by text).
      if (!chunk.contains("choices") || chunk["choices"].empty()) continue;
      const Json& choice = chunk["choices"][0];
      const bool has_tokens = (choice.contains("token_ids") && !choice["token_ids"].empty()) ||
                              !choice.value("text", std::string()).empty();
      if (!has_tokens) continue;
      const Clock::time_point now = Clock::now();
      if (!first_) {
        first_ = true;
        result.ttft = std::chrono::duration<double>(now - start_).count();
      } else {
        result.itl.push_back(std::chrono::duration<double>(now - last_).count());
      }
      last_ = now;
    }
    return true;
  }
  // What was received but is not an event yet: a non-streamed (error) body.
  const std::string& unparsed() const { return buffer_; }

 private:
  Clock::time_point start_, last_;
  bool first_ = false;
  std::string buffer_;
};

RequestResult send_one(httplib::Client& client, const std::string& body) {
  RequestResult result;
  const Clock::time_point start = Clock::now();
  SseTimer timer(start);
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/completions";
  request.body = body;
  request.set_header("Content-Type", "application/json");
  request.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    return timer.feed(data, n, result);
  };
  const httplib::Result response = client.send(request);
  result.e2e = std::chrono::duration<double>(Clock::now() - start).count();
  if (!response) {
    result.error = httplib::to_string(response.error());
  } else if (response->status != 200) {  // the server's message where its body has one
    const Json body = Json::parse(timer.unparsed(), nullptr, false);
    const Json::json_pointer message("/error/message");
    result.error =
        body.contains(message) && body.at(message).is_string()
            ? fmt::format("HTTP {}: {}", response->status, body.at(message).get<std::string>())
            : fmt::format("HTTP {}", response->status);
  }
  result.ok = result.error.empty() && result.output_tokens > 0;
  if (result.error.empty() && !result.ok) result.error = "no usage in the stream";
  return result;
}

std::string request_body(const ServeBenchArgs& args, const std::string& model,
                         std::mt19937_64& rng) {
  std::uniform_int_distribution<int32_t> token(args.token_id_low, args.token_id_high);
  std::vector<int32_t> prompt(args.input_len);
  for (int32_t& t : prompt) t = token(rng);
  return Json{{"model", model},
              {"prompt", prompt},
              {"max_tokens", args.output_len},
              {"ignore_eos", true},
              {"temperature", 0},
              {"stream", true},
              {"return_token_ids", true},
              {"stream_options", {{"include_usage", true}}}}
      .dump();
}

std::string served_model(httplib::Client& client) {
  const httplib::Result r = client.Get("/v1/models");
  if (!r || r->status != 200) input_error("cannot list models at the server (is it running?)");
  const Json models = Json::parse(r->body, nullptr, false);
  if (models.is_discarded() || models["data"].empty()) input_error("/v1/models listed no model");
  return models["data"][0]["id"].get<std::string>();
}

// Arrival times: all at once for an infinite rate, else a Poisson process.
std::vector<double> arrivals(const ServeBenchArgs& args, std::mt19937_64& rng) {
  std::vector<double> times(args.num_prompts, 0.0);
  if (std::isinf(args.request_rate)) return times;
  std::exponential_distribution<double> gap(args.request_rate);
  double t = 0;
  for (double& time : times) time = (t += gap(rng));
  return times;
}

struct Summary {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    return values[std::min(values.size() - 1, static_cast<size_t>(q * values.size()))] * 1e3;
  };
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / values.size() * 1e3;
  s.p50 = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  return s;
}

void report(const ServeBenchArgs& args, const std::vector<RequestResult>& results, double seconds) {
  std::vector<double> ttft, tpot, itl, e2e;
  int64_t n_ok = 0, output_tokens = 0;
  for (const RequestResult& r : results) {
    if (!r.ok) continue;
    ++n_ok;
    output_tokens += r.output_tokens;
    ttft.push_back(r.ttft);
    e2e.push_back(r.e2e);
    if (r.output_tokens > 1)
      tpot.push_back((r.e2e - r.ttft) / static_cast<double>(r.output_tokens - 1));
    itl.insert(itl.end(), r.itl.begin(), r.itl.end());
  }
  const int64_t input_tokens = n_ok * args.input_len;
  Json out = {
      {"completed", n_ok},
      {"failed", static_cast<int64_t>(results.size()) - n_ok},
      {"duration_s", seconds},
      {"request_throughput", n_ok / seconds},
      {"output_throughput", output_tokens / seconds},
      {"total_token_throughput", (input_tokens + output_tokens) / seconds},
      {"input_len", args.input_len},
      {"output_len", args.output_len},
      {"request_rate", std::isinf(args.request_rate) ? Json("inf") : Json(args.request_rate)},
      {"max_concurrency", args.max_concurrency}};
  for (const auto& [name, values] :
       {std::pair{"ttft_ms", &ttft}, {"tpot_ms", &tpot}, {"itl_ms", &itl}, {"e2el_ms", &e2e}}) {
    const Summary s = summarize(*values);
    out[name] = {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}};
  }
  for (const RequestResult& r : results)
    if (!r.ok) {
      out["first_error"] = r.error;
      break;
    }
  if (args.json) {
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("requests: %lld ok, %lld failed in %.2f s\n", static_cast<long long>(n_ok),
              static_cast<long long>(results.size() - n_ok), seconds);
  std::printf("throughput: %.2f req/s, %.1f output tok/s, %.1f total tok/s\n",
              out["request_throughput"].get<double>(), out["output_throughput"].get<double>(),
              out["total_token_throughput"].get<double>());
  for (const char* name : {"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"})
    std::printf("%-8s mean %9.2f  p50 %9.2f  p90 %9.2f  p99 %9.2f\n", name,
                out[name]["mean"].get<double>(), out[name]["p50"].get<double>(),
                out[name]["p90"].get<double>(), out[name]["p99"].get<double>());
  if (out.contains("first_error"))
    std::printf("first error: %s\n", out["first_error"].get<std::string>().c_str());
}

void run_bench_serve(const ServeBenchArgs& args) {
  if (args.num_prompts < 1 || args.input_len < 1 || args.output_len < 1)
    input_error("--num-prompts, --input-len and --output-len must be >= 1");
  httplib::Client probe(args.url);
  const std::string model = args.model.empty() ? served_model(probe) : args.model;
  std::mt19937_64 rng(args.seed);
  std::vector<std::string> bodies;
  for (int64_t i = 0; i < args.num_prompts; ++i) bodies.push_back(request_body(args, model, rng));
  const std::vector<double> times = arrivals(args, rng);
  const int64_t n_workers =
      std::min<int64_t>(args.num_prompts, args.max_concurrency > 0 ? args.max_concurrency : 4096);
  std::vector<RequestResult> results(args.num_prompts);
  std::atomic<int64_t> next{0};
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> workers;
  for (int64_t w = 0; w < n_workers; ++w) {
    workers.emplace_back([&] {
      httplib::Client client(args.url);
      client.set_read_timeout(3600);
      for (int64_t i; (i = next++) < args.num_prompts;) {
        std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(times[i])));
        results[i] = send_one(client, bodies[i]);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  report(args, results, std::chrono::duration<double>(Clock::now() - start).count());
}

}  // namespace

void add_bench_serve(CLI::App& bench) {
  auto args = std::make_shared<ServeBenchArgs>();
  CLI::App* serve =
      bench.add_subcommand("serve", "load a running server (vLLM's serving benchmark)");
  serve->add_option("--url", args->url, "the server's base URL");
  serve->add_option("--model", args->model, "model name (default: the server's first)");
  serve->add_option("--num-prompts", args->num_prompts, "requests");
  serve->add_option("--request-rate", args->request_rate, "requests per second (inf: all at once)");
  serve->add_option("--max-concurrency", args->max_concurrency, "requests in flight at most");
  serve->add_option("--input-len", args->input_len, "prompt tokens per request");
  serve->add_option("--output-len", args->output_len, "generated tokens per request");
  serve->add_option("--seed", args->seed, "seed of the random prompts and arrivals");
  serve->add_option("--token-id-low", args->token_id_low, "smallest prompt token id");
  serve->add_option("--token-id-high", args->token_id_high,
                    "largest prompt token id (below the model's vocabulary size)");
  serve->add_flag("--json", args->json, "print one JSON object");
  serve->callback([args] { run_bench_serve(*args); });
}

}  // namespace hadron::app
