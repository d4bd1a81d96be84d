// hadron generate: continue prompts (text, chat, token ids or a file of them).
#include <algorithm>
#include <cstdio>

#include "app/command.h"
#include "app/engine_flags.h"
#include "app/prompt_input.h"
#include "app/spec_stats_print.h"
#include "core/error.h"
#include "engine/generator.h"
#include "engine/tokenizer_detokenizer.h"
#include "loader/generation_defaults.h"

namespace hadron::app {
namespace {

struct GenerateArgs {
  EngineOptions engine;
  std::string load_format = "auto";
  PromptInput input;
  int64_t max_tokens = 64;
  SamplingParams sampling;
  // Which of --temperature, --top-k, --top-p the user set.
  bool temperature_given = false, top_k_given = false, top_p_given = false;
};

// generation_config.json's value for each filter flag left out, field by field as the server
// fills a request's missing fields (and Hugging Face merges generation configs).
void apply_defaults(const GenerationDefaults& defaults, const GenerateArgs& args,
                    SamplingParams& params) {
  if (defaults.temperature && !args.temperature_given) params.temperature = *defaults.temperature;
  if (defaults.top_k && !args.top_k_given) params.top_k = *defaults.top_k;
  if (defaults.top_p && !args.top_p_given) params.top_p = *defaults.top_p;
}

void print_result(const Prompt& prompt, const GenerationResult& result,
                  const Tokenizer* tokenizer) {
  if (prompt.is_text && tokenizer != nullptr) {
    std::printf("%s\n", result.texts[0].c_str());
    return;
  }
  std::string line;
  for (int32_t id : result.completions[0]) {
    if (!line.empty()) line += ' ';
    line += std::to_string(id);
  }
  std::printf("%s\n", line.c_str());
}

void run_generate(const GenerateArgs& args) {
  EngineOptions options = args.engine;
  finish_engine_options(options, args.load_format);
  if (args.max_tokens < 0) input_error("--max-tokens must be >= 0");
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer_if_any(options.model_path);
  const std::vector<Prompt> prompts = read_prompts(args.input, options.model_path, tokenizer.get());
  const GenerationDefaults defaults = read_generation_defaults(options.model_path);
  options.max_num_seqs = std::max<int64_t>(options.max_num_seqs, 1);
  std::unique_ptr<LoadedModel> model = load_model(options);
  std::vector<GenerationRequest> requests;
  for (const Prompt& prompt : prompts) {
    GenerationRequest request{prompt.ids, args.sampling};
    request.params.max_tokens = args.max_tokens;
    apply_defaults(defaults, args, request.params);
    if (request.params.temperature > 0 && !request.params.seed) request.params.seed = options.seed;
    request.params.stop_token_ids.insert(request.params.stop_token_ids.end(),
                                         defaults.eos_token_ids.begin(),
                                         defaults.eos_token_ids.end());
    if (request.params.ignore_eos) request.params.stop_token_ids.clear();
    requests.push_back(std::move(request));
  }
  const std::unique_ptr<TokenizerDetokenizer> detokenizer =
      tokenizer ? std::make_unique<TokenizerDetokenizer>(*tokenizer) : nullptr;
  GenerationStats stats;
  const std::vector<GenerationResult> results =
      generate(*model, requests, detokenizer.get(), &stats);
  for (size_t i = 0; i < results.size(); ++i) print_result(prompts[i], results[i], tokenizer.get());
  const double decode_seconds = stats.seconds - stats.first_token_seconds;
  // Tokens after each prompt's first (none when max_tokens is 0).
  const double after_first =
      std::max(0.0, stats.generated_tokens - static_cast<double>(prompts.size()));
  std::fprintf(stderr,
               "%zu prompts (%lld tokens), first tokens after %.3f s; %lld tokens in %.3f s "
               "(%.1f tok/s after the first); finish: %s\n",
               prompts.size(), static_cast<long long>(stats.prompt_tokens),
               stats.first_token_seconds, static_cast<long long>(stats.generated_tokens),
               stats.seconds, decode_seconds > 0 ? after_first / decode_seconds : 0.0,
               finish_reason_name(results[0].finish_reasons[0]));
  if (options.speculative) {
    print_spec_stats(stats.engine.spec);
    std::fprintf(stderr, "%lld engine steps for %lld tokens\n", static_cast<long long>(stats.steps),
                 static_cast<long long>(stats.generated_tokens));
  }
}

void setup_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* command = app.add_subcommand("generate", "generate continuations of prompts");
  add_engine_flags(*command, args->engine, args->load_format);
  add_speculative_flag(*command, args->engine);
  command->add_option("--prompt,-p", args->input.prompt, "prompt text");
  command->add_option("--chat", args->input.chat, "a user message, with the chat template");
  command->add_option("--prompt-ids", args->input.prompt_ids, "prompt as whitespace-separated ids");
  command->add_option("--prompts-file", args->input.prompts_file,
                      "one prompt per line, or JSONL lines with \"prompt\" or \"messages\"");
  command->add_option("--max-tokens", args->max_tokens, "tokens to generate per prompt");
  auto* temperature =
      command->add_option("--temperature", args->sampling.temperature, "0 = greedy");
  auto* top_k = command->add_option("--top-k", args->sampling.top_k, "0 = off");
  auto* top_p = command->add_option("--top-p", args->sampling.top_p, "nucleus mass");
  command->add_option("--min-p", args->sampling.min_p, "minimum relative probability");
  command->add_option("--repetition-penalty", args->sampling.repetition_penalty, "1 = off");
  command->add_option("--stop", args->sampling.stop, "stop strings (repeatable)");
  command->add_option("-n", args->sampling.n, "completions per prompt (first printed)");
  command->add_flag("--ignore-eos", args->sampling.ignore_eos,
                    "do not stop at end-of-sequence tokens");
  command->callback([args, temperature, top_k, top_p] {
    args->temperature_given = temperature->count() > 0;
    args->top_k_given = top_k->count() > 0;
    args->top_p_given = top_p->count() > 0;
    run_generate(*args);
  });
}

}  // namespace

HADRON_COMMAND(setup_generate);

}  // namespace hadron::app
