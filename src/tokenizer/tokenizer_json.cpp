// Tokenizer::from_json_text: the tokenizer.json format of Hugging Face tokenizers.
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/json_number.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"
#include "tokenizer/wordpiece_model.h"

namespace hadron {
namespace {

using nlohmann::json;
using tok::AddedToken;
using tok::TokenizerState;

std::string optional_string(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? std::string() : it->get<std::string>();
}

std::vector<std::pair<std::string, std::string>> parse_merges(const json& merges) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (const json& merge : merges) {
    if (merge.is_array() && merge.size() == 2) {
      out.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
      continue;
    }
    const std::string line = merge.get<std::string>();
    const size_t space = line.find(' ');
    if (space == std::string::npos) input_error("merge \"{}\" is not two tokens", line);
    out.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return out;
}

std::vector<std::pair<std::string, int32_t>> parse_vocab(const json& model) {
  std::vector<std::pair<std::string, int32_t>> vocab;
  vocab.reserve(model.at("vocab").size());
  for (const auto& [token, id] : model.at("vocab").items())
    vocab.emplace_back(token, tok::json_token_id(id));
  return vocab;
}

std::unique_ptr<tok::Model> parse_wordpiece(const json& model) {
  tok::WordPieceOptions options;
  options.unk_token = model.value("unk_token", options.unk_token);
  options.continuing_subword_prefix =
      model.value("continuing_subword_prefix", options.continuing_subword_prefix);
  options.max_input_chars_per_word = static_cast<size_t>(tok::json_integer(
      model.value("max_input_chars_per_word", json(100)), 0, 1 << 30, "max_input_chars_per_word"));
  return std::make_unique<tok::WordPieceModel>(parse_vocab(model), options);
}

std::unique_ptr<tok::Model> parse_model(const json& model, bool byte_level) {
  const std::string type = model.value("type", std::string("BPE"));
  if (type == "WordPiece") return parse_wordpiece(model);
  if (type != "BPE")
    input_error("model type \"{}\" is not supported (only BPE and WordPiece)", type);
  const json& dropout = model.value("dropout", json());
  if (!dropout.is_null() && dropout.get<double>() != 0.0) {
    input_error("BPE dropout {} is not supported", dropout.dump());
  }
  tok::BpeOptions options;
  options.byte_level = byte_level;
  options.ignore_merges = model.value("ignore_merges", false);
  options.byte_fallback = model.value("byte_fallback", false);
  options.fuse_unk = model.value("fuse_unk", false);
  if (const std::string unk = optional_string(model, "unk_token"); !unk.empty())
    options.unk_token = unk;
  options.continuing_subword_prefix = optional_string(model, "continuing_subword_prefix");
  options.end_of_word_suffix = optional_string(model, "end_of_word_suffix");
  return std::make_unique<tok::BpeModel>(parse_vocab(model), parse_merges(model.at("merges")),
                                         options);
}

// Ids as AddedVocabulary::add_tokens assigns them: a token already in the model keeps the
// model's id; the others are numbered from the model's size up, in file order. Tokens with
// empty content are dropped.
void assign_added_ids(std::vector<AddedToken>& tokens, const tok::Model& model, size_t n_model) {
  std::erase_if(tokens, [](const AddedToken& token) { return token.content.empty(); });
  tok::StringMap assigned;
  int32_t next_id = static_cast<int32_t>(n_model);
  for (AddedToken& token : tokens) {
    if (std::optional<int32_t> id = assigned.find(token.content)) {
      token.id = *id;
    } else if ((id = model.token_to_id(token.content))) {
      token.id = *id;
    } else {
      token.id = next_id++;
    }
    assigned.insert(token.content, token.id);
  }
}

void add_template_ids(const json& processor, TokenizerState& state);

// Post-processors only add ids around the sequence; the others (ByteLevel) change offsets.
void parse_post_processor(const json& processor, TokenizerState& state) {
  if (processor.is_null()) return;
  const std::string type = processor.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const json& child : processor.at("processors")) parse_post_processor(child, state);
  } else if (type == "TemplateProcessing") {
    add_template_ids(processor, state);
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    state.prefix_ids.insert(state.prefix_ids.begin(),
                            tok::json_token_id(processor.at("cls").at(1)));
    state.suffix_ids.push_back(tok::json_token_id(processor.at("sep").at(1)));
  } else if (type != "ByteLevel") {
    input_error("post-processor type \"{}\" is not supported", type);
  }
}

void add_template_ids(const json& processor, TokenizerState& state) {
  std::vector<int32_t> prefix, suffix;
  bool seen_sequence = false;
  for (const json& piece : processor.at("single")) {
    if (piece.contains("Sequence")) {
      seen_sequence = true;
      continue;
    }
    const std::string name = piece.at("SpecialToken").at("id").get<std::string>();
    const json& special = processor.at("special_tokens");
    if (!special.contains(name)) input_error("template special token \"{}\" is not defined", name);
    for (const json& id : special.at(name).at("ids")) {
      (seen_sequence ? suffix : prefix).push_back(tok::json_token_id(id));
    }
  }
  state.prefix_ids.insert(state.prefix_ids.begin(), prefix.begin(), prefix.end());
  state.suffix_ids.insert(state.suffix_ids.end(), suffix.begin(), suffix.end());
}

}  // namespace

Tokenizer Tokenizer::from_json_text(std::string_view json_text, const std::string& origin) {
  try {
    const json root = json::parse(json_text);
    auto state = std::make_shared<TokenizerState>();
    state->normalizer = tok::Normalizer::from_json(root.value("normalizer", json()));
    state->pre_tokenizer = tok::PreTokenizer::from_json(root.value("pre_tokenizer", json()));
    const json& model = root.at("model");
    state->model = parse_model(model, state->pre_tokenizer.byte_level());
    state->decoder = tok::Decoder::from_json(root.value("decoder", json()));
    parse_post_processor(root.value("post_processor", json()), *state);
    std::vector<AddedToken> added =
        tok::added_tokens_from_json(root.value("added_tokens", json::array()));
    assign_added_ids(added, *state->model, model.at("vocab").size());
    state->finalize(std::move(added));
    for (const auto* ids : {&state->prefix_ids, &state->suffix_ids}) {
      for (const int32_t id : *ids) {
        if (id < 0 || id >= static_cast<int32_t>(state->id_tokens.size())) {
          input_error("post-processor id {} is outside the vocabulary", id);
        }
      }
    }
    return Tokenizer(std::move(state));
  } catch (const json::exception& e) {
    input_error("{}: malformed tokenizer.json: {}", origin, e.what());
  } catch (const InputError& e) {
    input_error("{}: {}", origin, e.what());
  }
}

}  // namespace hadron
