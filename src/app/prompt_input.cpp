#include "app/prompt_input.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/engine_flags.h"
#include "chat/chat_template_loader.h"
#include "chat/template.h"
#include "core/error.h"

namespace hadron::app {
namespace {

constexpr const char* kTokenizerFiles =
    "tokenizer.json, vocab.json + merges.txt, tiktoken.model or a *.tiktoken file";

std::vector<int32_t> encode_text(const Tokenizer* tokenizer, const std::string& text) {
  if (tokenizer == nullptr)
    input_error("text prompts need a tokenizer in the model folder ({})", kTokenizerFiles);
  return tokenizer->encode(text, /*add_special_tokens=*/true);
}

std::vector<int32_t> encode_chat(const Tokenizer* tokenizer, const std::string& model_dir,
                                 const nlohmann::ordered_json& messages) {
  if (tokenizer == nullptr)
    input_error("chat prompts need a tokenizer in the model folder ({})", kTokenizerFiles);
  const chat::ModelChatTemplate found = chat::load_chat_template(model_dir);
  const chat::ChatTemplate chat_template = chat::ChatTemplate::parse(found.source);
  nlohmann::ordered_json context = {{"messages", messages},
                                    {"add_generation_prompt", true},
                                    {"bos_token", found.bos_token},
                                    {"eos_token", found.eos_token}};
  // The template writes its special tokens itself, so none are added again.
  return tokenizer->encode(chat_template.render(context), /*add_special_tokens=*/false);
}

Prompt prompt_from_json_line(const std::string& line, const std::string& model_dir,
                             const Tokenizer* tokenizer) {
  nlohmann::ordered_json value;
  try {
    value = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    input_error("--prompts-file: invalid JSON line: {}", e.what());
  }
  if (value.contains("messages"))
    return {encode_chat(tokenizer, model_dir, value["messages"]), true};
  if (value.contains("prompt") && value["prompt"].is_string())
    return {encode_text(tokenizer, value["prompt"].get<std::string>()), true};
  input_error("--prompts-file: a JSON line needs \"prompt\" (string) or \"messages\"");
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_if_any(const std::string& model_dir) {
  if (!Tokenizer::folder_has_tokenizer(model_dir)) return nullptr;
  return std::make_unique<Tokenizer>(Tokenizer::load(model_dir));
}

std::vector<Prompt> read_prompts(const PromptInput& input, const std::string& model_dir,
                                 const Tokenizer* tokenizer) {
  std::vector<Prompt> prompts;
  if (!input.prompt_ids.empty())
    prompts.push_back({parse_token_ids(input.prompt_ids, "--prompt-ids"), false});
  if (!input.prompt.empty()) prompts.push_back({encode_text(tokenizer, input.prompt), true});
  if (!input.chat.empty())
    prompts.push_back(
        {encode_chat(tokenizer, model_dir, {{{"role", "user"}, {"content", input.chat}}}), true});
  if (!input.prompts_file.empty()) {
    std::ifstream in(input.prompts_file);
    if (!in) input_error("cannot read --prompts-file {}", input.prompts_file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (line.front() == '{')
        prompts.push_back(prompt_from_json_line(line, model_dir, tokenizer));
      else
        prompts.push_back({encode_text(tokenizer, line), true});
    }
  }
  if (prompts.empty())
    input_error(
        "give a prompt: --prompt TEXT, --chat MESSAGE, --prompt-ids IDS or --prompts-file F");
  return prompts;
}

}  // namespace hadron::app
