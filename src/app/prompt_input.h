// Turning what the user typed into prompts: token ids, text, a chat message or a file of
// prompts, with the model's tokenizer and chat template.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace hadron::app {

struct PromptInput {
  std::string prompt_ids;    // "1 2 3"
  std::string prompt;        // raw text
  std::string chat;          // one user message, rendered with the chat template
  std::string prompts_file;  // one prompt per line, or JSONL with "prompt" / "messages"
};

struct Prompt {
  std::vector<int32_t> ids;
  bool is_text = false;  // print text rather than ids
};

// The tokenizer of the model folder, or nullptr when it has none.
std::unique_ptr<Tokenizer> load_tokenizer_if_any(const std::string& model_dir);

// Every prompt the input names. Text needs a tokenizer (InputError otherwise).
std::vector<Prompt> read_prompts(const PromptInput& input, const std::string& model_dir,
                                 const Tokenizer* tokenizer);

}  // namespace hadron::app
