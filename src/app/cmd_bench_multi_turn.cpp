// hadron bench multi-turn: chat conversations whose turns share a growing prefix (a system
// prompt, then every earlier message and answer), run through the engine twice: with prefix
// caching off (every prompt a miss) and on. Reports the share of prompt tokens reused and the
// time to first token of later turns in both runs: the figures of hybrid-model prefix caching
// (ADR 0011) against a pure-attention model on the same workload.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

#include "app/bench_multi_turn.h"
#include "app/engine_flags.h"
#include "core/error.h"
#include "engine/engine.h"

namespace hadron::app {
namespace {

struct MultiTurnArgs {
  EngineOptions engine;
  std::string load_format = "auto";
  int64_t num_conversations = 16;
  int64_t num_turns = 6;
  int64_t system_len = 1000;    // the system prompt all conversations share
  int64_t turn_len = 300;       // a user message's tokens
  int64_t output_len = 64;      // an answer's tokens
  int64_t max_concurrency = 4;  // conversations in flight
  bool drop_answers = false;    // a turn's prompt leaves out earlier answers
  bool json = false;
};

struct Conversation {
  std::vector<int32_t> prompt;  // the next turn's
  int64_t turn = 0;
  std::chrono::steady_clock::time_point sent;
  bool answered = false;  // the current turn's first token came
};

struct RunFigures {
  int64_t prompt_tokens = 0;
  int64_t reused_tokens = 0;                        // prompt tokens never computed
  std::vector<double> first_turn_ttft, later_ttft;  // seconds
  double seconds = 0;
};

std::vector<int32_t> random_tokens(std::mt19937& rng, int64_t n, int64_t vocab) {
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % vocab);
  return tokens;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Runs the workload on a fresh engine; the same seed gives the same messages in every run.
RunFigures run_conversations(LoadedModel& model, const MultiTurnArgs& args) {
  using Clock = std::chrono::steady_clock;
  const int64_t vocab = model.config().vocab_size;
  std::mt19937 rng(static_cast<uint32_t>(args.engine.seed));
  const std::vector<int32_t> system = random_tokens(rng, args.system_len, vocab);
  Engine engine(model, nullptr);
  SamplingParams params;
  params.max_tokens = args.output_len;
  params.ignore_eos = true;
  params.temperature = 0;                 // greedy: both runs see the same answers
  std::map<uint64_t, Conversation> live;  // by request id
  RunFigures figures;
  int64_t started = 0, n_requests = 0, generated = 0;
  auto send = [&](Conversation c) {
    const std::vector<int32_t> message = random_tokens(rng, args.turn_len, vocab);
    c.prompt.insert(c.prompt.end(), message.begin(), message.end());
    c.sent = Clock::now();
    c.answered = false;
    figures.prompt_tokens += static_cast<int64_t>(c.prompt.size());
    engine.add_request(n_requests, c.prompt, params);
    live.emplace(n_requests++, std::move(c));
  };
  const auto start = Clock::now();
  for (; started < std::min(args.max_concurrency, args.num_conversations); ++started)
    send({system});
  while (engine.has_unfinished()) {
    for (const RequestOutput& out : engine.step()) {
      Conversation& c = live.at(out.request_id);
      if (!c.answered && !out.token_ids.empty()) {
        const double ttft = std::chrono::duration<double>(Clock::now() - c.sent).count();
        (c.turn == 0 ? figures.first_turn_ttft : figures.later_ttft).push_back(ttft);
        c.answered = true;
      }
      if (!args.drop_answers)
        c.prompt.insert(c.prompt.end(), out.token_ids.begin(), out.token_ids.end());
      generated += static_cast<int64_t>(out.token_ids.size());
      if (!out.finished) continue;
      Conversation next = std::move(c);
      live.erase(out.request_id);
      if (++next.turn < args.num_turns)
        send(std::move(next));
      else if (started++ < args.num_conversations)
        send({system});
    }
  }
  figures.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // Computed tokens: every prompt token not reused, every answer token but the last.
  const EngineStats e = engine.stats();
  const int64_t computed = e.decode_steps.n_tokens + e.mixed_steps.n_tokens +
                           e.prefill_steps.n_tokens - e.n_recomputed_tokens;
  figures.reused_tokens = figures.prompt_tokens + (generated - n_requests) - computed;
  return figures;
}

void print_run(const char* name, const RunFigures& f, bool json, const char* end) {
  const double rate = static_cast<double>(f.reused_tokens) / std::max<int64_t>(1, f.prompt_tokens);
  if (json) {
    std::printf(
        "\"%s\": {\"prompt_tokens\": %lld, \"reused_tokens\": %lld, \"hit_rate\": %.4f, "
        "\"ttft_first_turn_median_ms\": %.2f, \"ttft_later_turns_median_ms\": %.2f, "
        "\"seconds\": %.3f}%s",
        name, static_cast<long long>(f.prompt_tokens), static_cast<long long>(f.reused_tokens),
        rate, 1e3 * median_of(f.first_turn_ttft), 1e3 * median_of(f.later_ttft), f.seconds, end);
    return;
  }
  std::printf(
      "  %s: %lld prompt tokens, %lld reused (hit rate %.1f%%); median TTFT first turn %.2f ms, "
      "later turns %.2f ms; %.2f s\n",
      name, static_cast<long long>(f.prompt_tokens), static_cast<long long>(f.reused_tokens),
      100 * rate, 1e3 * median_of(f.first_turn_ttft), 1e3 * median_of(f.later_ttft), f.seconds);
}

void run_multi_turn(MultiTurnArgs args) {
  if (args.num_conversations < 1 || args.num_turns < 1 || args.max_concurrency < 1 ||
      args.system_len < 0 || args.turn_len < 1 || args.output_len < 1)
    input_error("bench multi-turn needs positive counts and lengths");
  const int64_t context = args.system_len + args.num_turns * (args.turn_len + args.output_len) + 1;
  if (args.engine.max_model_len == 0) args.engine.max_model_len = context;
  finish_engine_options(args.engine, args.load_format);
  RunFigures runs[2];
  std::string architecture, device;
  for (const bool caching : {false, true}) {
    EngineOptions options = args.engine;
    options.enable_prefix_caching = caching;
    std::unique_ptr<LoadedModel> model = load_model(options);
    architecture = model->config().architecture;
    device = model->backend().name();
    runs[caching] = run_conversations(*model, args);
  }
  const double ratio =
      median_of(runs[1].later_ttft) / std::max(1e-12, median_of(runs[0].later_ttft));
  if (args.json) {
    std::printf("{\"model\": \"%s\", \"device\": \"%s\", ", architecture.c_str(), device.c_str());
    print_run("no_prefix_caching", runs[0], true, ", ");
    print_run("prefix_caching", runs[1], true, ", ");
    std::printf("\"later_ttft_ratio\": %.3f}\n", ratio);
    return;
  }
  std::printf(
      "%s on %s: %lld conversations x %lld turns (system %lld, message %lld, answer %lld "
      "tokens%s), %lld at a time\n",
      architecture.c_str(), device.c_str(), static_cast<long long>(args.num_conversations),
      static_cast<long long>(args.num_turns), static_cast<long long>(args.system_len),
      static_cast<long long>(args.turn_len), static_cast<long long>(args.output_len),
      args.drop_answers ? ", dropped from later prompts" : "",
      static_cast<long long>(args.max_concurrency));
  print_run("prefix caching off", runs[0], false, "");
  print_run("prefix caching on ", runs[1], false, "");
  std::printf("  later turns' median TTFT, on / off: %.3f\n", ratio);
}

}  // namespace

void add_bench_multi_turn(CLI::App& bench) {
  auto args = std::make_shared<MultiTurnArgs>();
  CLI::App* command = bench.add_subcommand(
      "multi-turn", "chat conversations sharing a growing prefix: prefix-cache hit rate and TTFT");
  add_engine_flags(*command, args->engine, args->load_format);
  command->add_option("--num-conversations", args->num_conversations, "conversations in all");
  command->add_option("--num-turns", args->num_turns, "turns per conversation");
  command->add_option("--system-len", args->system_len, "tokens of the shared system prompt");
  command->add_option("--turn-len", args->turn_len, "tokens of each user message");
  command->add_option("--output-len", args->output_len, "tokens of each answer");
  command->add_option("--max-concurrency", args->max_concurrency, "conversations in flight");
  command->add_flag("--drop-answers", args->drop_answers,
                    "leave earlier answers out of a turn's prompt (as chat templates drop past "
                    "reasoning)");
  command->add_flag("--json", args->json, "print one JSON object");
  command->callback([args] { run_multi_turn(*args); });
}

}  // namespace hadron::app
