// hadron tokenize: the ids of a text as a JSON array, with the model's tokenizer.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "app/command.h"
#include "core/error.h"
#include "loader/gguf_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace hadron::app {
namespace {

struct TokenizeArgs {
  std::string tokenizer;
  std::string text_file;
  std::string text;
  bool add_special_tokens = false;
};

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error("cannot read --text-file {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void run_tokenize(const TokenizeArgs& args) {
  const Tokenizer tokenizer = args.tokenizer.ends_with(".gguf")
                                  ? load_gguf_tokenizer(args.tokenizer)
                                  : Tokenizer::load(args.tokenizer);
  const std::string text = args.text_file.empty() ? args.text : read_text_file(args.text_file);
  const std::vector<int32_t> ids = tokenizer.encode(text, args.add_special_tokens);
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", ids[i]);
  out += "]\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void setup_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* command =
      app.add_subcommand("tokenize", "print the token ids of a text as a JSON array");
  command
      ->add_option("--tokenizer", args->tokenizer,
                   "tokenizer.json, a model folder (tokenizer.json, vocab.json + merges.txt, or a "
                   "tiktoken file), "
                   "or a llama.cpp .gguf file (its vocabulary)")
      ->required();
  auto* file = command->add_option("--text-file", args->text_file, "file whose bytes are encoded");
  auto* text = command->add_option("--text", args->text, "text to encode");
  file->excludes(text);
  command->add_flag("--add-special-tokens", args->add_special_tokens,
                    "apply the tokenizer's post-processor (e.g. prepend BOS)");
  command->callback([args] { run_tokenize(*args); });
}

}  // namespace

HADRON_COMMAND(setup_tokenize);

}  // namespace hadron::app
