// Finds a model folder's chat template and the special-token strings templates expect.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace hadron::chat {

struct ModelChatTemplate {
  std::string source;     // the Jinja text
  std::string origin;     // the file it came from, for messages
  std::string bos_token;  // empty when the model defines none
  std::string eos_token;
};

// Looks, in transformers' order, at chat_template.jinja, chat_template.json and
// tokenizer_config.json's `chat_template` (a string, or a list of {name, template} from which
// `name` is taken, "default" when empty). Special tokens come from tokenizer_config.json, else
// special_tokens_map.json, as strings or AddedToken objects. Throws InputError when the folder
// has no template or a file is malformed.
ModelChatTemplate load_chat_template(const std::filesystem::path& model_dir,
                                     std::string_view name = "");

}  // namespace hadron::chat
