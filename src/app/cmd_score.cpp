// hadron score: teacher-forced logits after each position, dumped as .npy.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/command.h"
#include "app/engine_flags.h"
#include "core/error.h"
#include "core/npy.h"
#include "engine/generator.h"

namespace hadron::app {
namespace {

struct ScoreArgs {
  EngineOptions engine;
  std::string load_format = "auto";
  std::string tokens_file;
  std::string dump_logits;
};

void run_score(const ScoreArgs& args) {
  EngineOptions options = args.engine;
  finish_engine_options(options, args.load_format);
  std::ifstream in(args.tokens_file);
  if (!in) input_error("cannot read --tokens-file {}", args.tokens_file);
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<int32_t> tokens = parse_token_ids(text.str(), args.tokens_file);
  std::unique_ptr<LoadedModel> model = load_model(options);
  const std::vector<float> logits = score(*model, tokens);
  const int64_t vocab = model->config().vocab_size;
  if (!args.dump_logits.empty())
    write_npy(args.dump_logits, logits.data(), {static_cast<int64_t>(tokens.size()), vocab});
  // Mean negative log-likelihood of each next token, as a quick summary.
  double nll = 0;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const float* row = logits.data() + i * vocab;
    double max_logit = row[0], sum = 0;
    for (int64_t v = 1; v < vocab; ++v) max_logit = std::max<double>(max_logit, row[v]);
    for (int64_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max_logit);
    nll += max_logit + std::log(sum) - row[tokens[i + 1]];
  }
  const size_t n_pred = tokens.size() > 1 ? tokens.size() - 1 : 1;
  std::printf("tokens: %zu, mean nll: %.4f, perplexity: %.3f\n", tokens.size(), nll / n_pred,
              std::exp(nll / n_pred));
}

void setup_score(CLI::App& app) {
  auto args = std::make_shared<ScoreArgs>();
  CLI::App* command = app.add_subcommand("score", "teacher-forced logits of a token sequence");
  add_engine_flags(*command, args->engine, args->load_format);
  command->add_option("--tokens-file", args->tokens_file, "whitespace-separated token ids")
      ->required();
  command->add_option("--dump-logits", args->dump_logits,
                      "write float32 logits [n_tokens, vocab] to this .npy file");
  command->callback([args] { run_score(*args); });
}

}  // namespace

HADRON_COMMAND(setup_score);

}  // namespace hadron::app
