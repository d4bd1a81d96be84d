// hadron bench latency | throughput: the engine's speed with random prompts (vLLM's
// benchmark_latency / benchmark_throughput equivalents).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include "app/bench_multi_turn.h"
#include "app/bench_serve.h"
#include "app/command.h"
#include "app/engine_flags.h"
#include "app/spec_stats_print.h"
#include "backends/backend_factory.h"
#include "core/error.h"
#include "engine/generator.h"

namespace hadron::app {
namespace {

struct BenchArgs {
  EngineOptions engine;
  std::string load_format = "auto";
  int64_t batch = 1;
  int64_t input_len = 128;
  int64_t output_len = 128;
  int64_t num_prompts = 100;
  int num_iters = 3;
  bool json = false;
  std::string kernel_trace;  // latency: where to write the decode steps' kernel timeline
};

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<int32_t> random_prompt(std::mt19937& rng, int64_t len, int64_t vocab) {
  std::vector<int32_t> prompt(len);
  for (int32_t& t : prompt) t = static_cast<int32_t>(rng() % vocab);
  return prompt;
}

struct LatencyRun {
  double prefill_seconds = 0;                     // until every sequence has its first token
  double decode_seconds = 0;                      // the remaining output_len - 1 steps
  uint64_t decode_from_ns = 0, decode_to_ns = 0;  // the kernel tracer's clock, when tracing
  SpecStats spec;                                 // speculative decoding's counters
};

uint64_t trace_clock(KernelTracer* tracer) { return tracer ? tracer->now_ns() : 0; }

LatencyRun run_latency_once(LoadedModel& model, const BenchArgs& args, std::mt19937& rng,
                            KernelTracer* tracer) {
  Engine engine(model, nullptr);
  SamplingParams params;
  params.max_tokens = args.output_len;
  params.ignore_eos = true;
  for (int64_t i = 0; i < args.batch; ++i)
    engine.add_request(i, random_prompt(rng, args.input_len, model.config().vocab_size), params);
  const auto start = Clock::now();
  int64_t started = 0;
  while (started < args.batch)
    for (const RequestOutput& out : engine.step()) started += out.n_output_tokens == 1;
  const auto first = Clock::now();
  const uint64_t from_ns = trace_clock(tracer);
  while (engine.has_unfinished()) engine.step();
  return {seconds_between(start, first), seconds_between(first, Clock::now()), from_ns,
          trace_clock(tracer), engine.stats().spec};
}

// --kernel-trace: the kernels of the last run's decode steps, as a per-step table (to `path`
// and stderr) and as raw spans (`path`.csv: name, start and end in ns).
void write_kernel_trace(const BenchArgs& args, const LatencyRun& run, KernelTracer& tracer) {
  const std::vector<KernelSpan> spans = tracer.stop(run.decode_from_ns, run.decode_to_ns);
  const std::string table = format_kernel_timeline(summarise_kernels(spans), args.output_len - 1);
  std::fprintf(stderr, "decode kernels (traced run):\n%s", table.c_str());
  std::ofstream(args.kernel_trace) << table;
  std::ofstream csv(args.kernel_trace + ".csv");
  csv << "name,start_ns,end_ns\n";
  for (const KernelSpan& span : spans)
    csv << '"' << span.name << "\"," << span.start_ns << ',' << span.end_ns << '\n';
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void run_latency(BenchArgs args) {
  args.engine.max_num_seqs = std::max(args.engine.max_num_seqs, args.batch);
  args.engine.max_num_batched_tokens =
      std::max(args.engine.max_num_batched_tokens, args.batch * args.input_len);
  if (args.engine.max_model_len == 0) args.engine.max_model_len = args.input_len + args.output_len;
  finish_engine_options(args.engine, args.load_format);
  if (args.batch < 1 || args.input_len < 1 || args.output_len < 2 || args.num_iters < 1)
    input_error("bench latency needs --batch >= 1, --input-len >= 1, --output-len >= 2");
  std::unique_ptr<KernelTracer> tracer;
  if (!args.kernel_trace.empty()) {
    tracer = make_kernel_tracer();
    if (!tracer)
      input_error(
          "--kernel-trace needs a build with the CUDA backend and CUPTI (CUDA's "
          "profiling library)");
    // Before the model loads, so that the decode graphs are captured with tracing on (their
    // kernels are then recorded at their in-graph times, as measured on the H100).
    tracer->start();
  }
  const auto load_start = Clock::now();
  std::unique_ptr<LoadedModel> model = load_model(args.engine);
  const double load_seconds = seconds_between(load_start, Clock::now());
  std::mt19937 rng(args.engine.seed);
  run_latency_once(*model, args, rng, tracer.get());  // warm-up
  std::vector<double> prefill, decode;
  LatencyRun run;
  for (int i = 0; i < args.num_iters; ++i) {
    run = run_latency_once(*model, args, rng, tracer.get());
    prefill.push_back(run.prefill_seconds);
    decode.push_back(run.decode_seconds);
  }
  if (tracer) write_kernel_trace(args, run, *tracer);
  const double prefill_s = median(prefill), decode_s = median(decode);
  const double prefill_tps = args.batch * args.input_len / prefill_s;
  const double decode_tps = args.batch * (args.output_len - 1) / decode_s;
  const double tpot_ms = 1e3 * decode_s / (args.output_len - 1);
  if (args.json) {
    std::printf(
        "{\"model\": \"%s\", \"device\": \"%s\", \"batch\": %lld, \"input_len\": %lld, "
        "\"output_len\": %lld, \"load_seconds\": %.3f, \"prefill_seconds\": %.6f, "
        "\"prefill_tok_s\": %.1f, \"decode_tok_s\": %.1f, \"tpot_ms\": %.4f, "
        "\"end_to_end_seconds\": %.6f}\n",
        model->config().architecture.c_str(), model->backend().name().c_str(),
        static_cast<long long>(args.batch), static_cast<long long>(args.input_len),
        static_cast<long long>(args.output_len), load_seconds, prefill_s, prefill_tps, decode_tps,
        tpot_ms, prefill_s + decode_s);
    if (args.engine.speculative) print_spec_stats_json(run.spec);
    return;
  }
  std::printf("batch %lld, input %lld, output %lld on %s (median of %d)\n",
              static_cast<long long>(args.batch), static_cast<long long>(args.input_len),
              static_cast<long long>(args.output_len), model->backend().name().c_str(),
              args.num_iters);
  std::printf("  prefill: %.4f s, %.1f tok/s\n", prefill_s, prefill_tps);
  std::printf("  decode:  %.1f tok/s, %.3f ms per output token\n", decode_tps, tpot_ms);
  std::printf("  end to end: %.4f s (model load %.2f s)\n", prefill_s + decode_s, load_seconds);
  if (args.engine.speculative) print_spec_stats(run.spec, stdout);
}

// "<name>": {"steps": .., "tokens": .., "seconds": ..} then `after`.
void print_step_kind_json(const char* name, const StepKindStats& kind, const char* after) {
  std::printf("\"%s\": {\"steps\": %lld, \"tokens\": %lld, \"seconds\": %.3f}%s", name,
              static_cast<long long>(kind.n_steps), static_cast<long long>(kind.n_tokens),
              kind.seconds, after);
}

void print_step_kind(const char* name, const StepKindStats& kind) {
  std::printf("  %s steps: %lld, %lld tokens, %.2f s (%.2f ms each)\n", name,
              static_cast<long long>(kind.n_steps), static_cast<long long>(kind.n_tokens),
              kind.seconds, 1e3 * kind.seconds / std::max<int64_t>(1, kind.n_steps));
}

void run_throughput(BenchArgs args) {
  if (args.engine.max_model_len == 0) args.engine.max_model_len = args.input_len + args.output_len;
  finish_engine_options(args.engine, args.load_format);
  if (args.num_prompts < 1 || args.input_len < 1 || args.output_len < 1)
    input_error("bench throughput needs --num-prompts, --input-len, --output-len >= 1");
  std::unique_ptr<LoadedModel> model = load_model(args.engine);
  std::mt19937 rng(args.engine.seed);
  std::vector<GenerationRequest> requests;
  for (int64_t i = 0; i < args.num_prompts; ++i) {
    GenerationRequest request{random_prompt(rng, args.input_len, model->config().vocab_size), {}};
    request.params.max_tokens = args.output_len;
    request.params.ignore_eos = true;
    requests.push_back(std::move(request));
  }
  GenerationStats stats;
  generate(*model, requests, nullptr, &stats);
  const double rps = args.num_prompts / stats.seconds;
  const double in_tps = stats.prompt_tokens / stats.seconds;
  const double out_tps = stats.generated_tokens / stats.seconds;
  const double host_ms_per_step =
      1e3 * stats.engine.host_seconds / std::max<int64_t>(1, stats.engine.n_steps);
  const EngineStats& e = stats.engine;
  if (args.json) {
    std::printf(
        "{\"model\": \"%s\", \"device\": \"%s\", \"num_prompts\": %lld, \"input_len\": "
        "%lld, \"output_len\": %lld, \"seconds\": %.3f, \"requests_per_s\": %.3f, "
        "\"input_tok_s\": %.1f, \"output_tok_s\": %.1f, \"total_tok_s\": %.1f, "
        "\"steps\": %lld, \"preemptions\": %lld, \"recomputed_tokens\": %lld, "
        "\"host_ms_per_step\": %.4f, ",
        model->config().architecture.c_str(), model->backend().name().c_str(),
        static_cast<long long>(args.num_prompts), static_cast<long long>(args.input_len),
        static_cast<long long>(args.output_len), stats.seconds, rps, in_tps, out_tps,
        in_tps + out_tps, static_cast<long long>(stats.steps),
        static_cast<long long>(e.n_preemptions), static_cast<long long>(e.n_recomputed_tokens),
        host_ms_per_step);
    print_step_kind_json("decode_steps", e.decode_steps, ", ");
    print_step_kind_json("mixed_steps", e.mixed_steps, ", ");
    print_step_kind_json("prefill_steps", e.prefill_steps, "}\n");
    if (args.engine.speculative) print_spec_stats_json(e.spec);
    return;
  }
  std::printf(
      "%lld prompts, input %lld, output %lld on %s in %.2f s (%lld steps, %lld preemptions)\n",
      static_cast<long long>(args.num_prompts), static_cast<long long>(args.input_len),
      static_cast<long long>(args.output_len), model->backend().name().c_str(), stats.seconds,
      static_cast<long long>(stats.steps), static_cast<long long>(stats.engine.n_preemptions));
  std::printf("  %.2f requests/s, %.1f input tok/s, %.1f output tok/s, %.1f total tok/s\n", rps,
              in_tps, out_tps, in_tps + out_tps);
  std::printf("  host scheduling + postprocessing: %.3f ms per step\n", host_ms_per_step);
  std::printf("  %lld tokens recomputed after preemption\n",
              static_cast<long long>(e.n_recomputed_tokens));
  print_step_kind("decode-only", e.decode_steps);
  print_step_kind("mixed", e.mixed_steps);
  print_step_kind("prefill-only", e.prefill_steps);
  if (args.engine.speculative) print_spec_stats(e.spec, stdout);
}

void add_shape_flags(CLI::App& command, BenchArgs& args) {
  add_engine_flags(command, args.engine, args.load_format);
  add_speculative_flag(command, args.engine);
  command.add_option("--input-len", args.input_len, "prompt tokens per request");
  command.add_option("--output-len", args.output_len, "generated tokens per request");
  command.add_flag("--json", args.json, "print one JSON object");
}

void setup_bench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "measure latency or throughput");
  bench->require_subcommand(1);
  auto latency_args = std::make_shared<BenchArgs>();
  CLI::App* latency = bench->add_subcommand("latency", "prefill and decode speed of one batch");
  add_shape_flags(*latency, *latency_args);
  latency->add_option("--batch", latency_args->batch, "sequences decoded together");
  latency->add_option("--num-iters", latency_args->num_iters, "timed runs (median reported)");
  latency->add_option("--kernel-trace", latency_args->kernel_trace,
                      "CUDA: write the last run's decode kernels (per-step table; FILE.csv: "
                      "spans) through CUPTI; the traced runs may run a little slower");
  latency->callback([latency_args] { run_latency(*latency_args); });
  auto throughput_args = std::make_shared<BenchArgs>();
  CLI::App* throughput = bench->add_subcommand("throughput", "offline throughput of many requests");
  add_shape_flags(*throughput, *throughput_args);
  throughput->add_option("--num-prompts", throughput_args->num_prompts, "requests");
  throughput->callback([throughput_args] { run_throughput(*throughput_args); });
  add_bench_serve(*bench);
  add_bench_multi_turn(*bench);
}

}  // namespace

HADRON_COMMAND(setup_bench);

}  // namespace hadron::app
