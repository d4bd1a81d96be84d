// hadron generate: continue prompts given as token ids.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/command.h"
#include "app/engine_flags.h"
#include "core/error.h"
#include "engine/generator.h"

namespace hadron::app {
namespace {

struct GenerateArgs {
  EngineOptions engine;
  std::string load_format = "auto";
  std::string prompt_ids;
  int64_t max_tokens = 32;
  SamplingParams sampling;
  bool ignore_eos = false;
};

void run_generate(const GenerateArgs& args) {
  EngineOptions options = args.engine;
  finish_engine_options(options, args.load_format);
  if (args.prompt_ids.empty()) input_error("generate: give --prompt-ids");
  if (args.max_tokens < 0) input_error("--max-tokens must be >= 0");
  std::unique_ptr<LoadedModel> model = LoadedModel::load(options);
  GenerationRequest request;
  request.prompt = parse_token_ids(args.prompt_ids, "--prompt-ids");
  request.params = args.sampling;
  request.params.max_tokens = args.max_tokens;
  request.params.ignore_eos = args.ignore_eos;
  GenerationStats stats;
  const std::vector<GenerationResult> results = generate(*model, {request}, nullptr, &stats);
  std::string line;
  for (int32_t id : results[0].completions[0])
    line += (line.empty() ? "" : " ") + std::to_string(id);
  std::printf("%s\n", line.c_str());
  const double decode_seconds = stats.seconds - stats.first_token_seconds;
  std::fprintf(stderr,
               "finish: %s; %lld prompt tokens, first token after %.3f s; %lld tokens in "
               "%.3f s (%.1f tok/s after the first)\n",
               finish_reason_name(results[0].finish_reasons[0]),
               static_cast<long long>(stats.prompt_tokens), stats.first_token_seconds,
               static_cast<long long>(stats.generated_tokens), stats.seconds,
               decode_seconds > 0 ? (stats.generated_tokens - 1) / decode_seconds : 0.0);
}

void setup_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* command = app.add_subcommand("generate", "generate a continuation of a prompt");
  add_engine_flags(*command, args->engine, args->load_format);
  command->add_option("--prompt-ids", args->prompt_ids, "prompt as whitespace-separated ids");
  command->add_option("--max-tokens", args->max_tokens, "tokens to generate");
  command->add_option("--temperature", args->sampling.temperature, "0 = greedy");
  command->add_option("--top-k", args->sampling.top_k, "0 = off");
  command->add_option("--top-p", args->sampling.top_p, "nucleus mass");
  command->add_option("--min-p", args->sampling.min_p, "minimum relative probability");
  command->add_flag("--ignore-eos", args->ignore_eos, "do not stop at end-of-sequence tokens");
  command->callback([args] {
    if (args->sampling.temperature > 0) args->sampling.seed = args->engine.seed;
    run_generate(*args);
  });
}

}  // namespace

HADRON_COMMAND(setup_generate);

}  // namespace hadron::app
