#include "loader/gguf_tokenizer.h"

#include <limits>

#include "core/error.h"

namespace hadron {
namespace {

std::optional<int32_t> token_id(const GgufMetadata& metadata, std::string_view key) {
  const std::optional<int64_t> id = metadata.get_int(key);
  if (!id) return std::nullopt;
  if (*id < 0 || *id > std::numeric_limits<int32_t>::max()) {
    input_error("{}: \"{}\" = {} is not a token id", metadata.origin(), key, *id);
  }
  return static_cast<int32_t>(*id);
}

}  // namespace

tok::LlamaVocab gguf_llama_vocab(const GgufMetadata& metadata) {
  tok::LlamaVocab vocab;
  const std::optional<std::string> model = metadata.get_string("tokenizer.ggml.model");
  if (!model)
    input_error("{}: no tokenizer.ggml.model: the file has no tokenizer", metadata.origin());
  vocab.model = *model;
  vocab.pre = metadata.get_string("tokenizer.ggml.pre").value_or("default");
  vocab.tokens = metadata.get_strings("tokenizer.ggml.tokens");
  for (const double score : metadata.get_floats("tokenizer.ggml.scores")) {
    vocab.scores.push_back(static_cast<float>(score));
  }
  for (const int64_t type : metadata.get_ints("tokenizer.ggml.token_type")) {
    if (type < 0 || type > static_cast<int64_t>(tok::LlamaTokenType::kByte)) {
      input_error("{}: token type {} is not one of 0..6", metadata.origin(), type);
    }
    vocab.token_types.push_back(static_cast<tok::LlamaTokenType>(type));
  }
  vocab.merges = metadata.get_strings("tokenizer.ggml.merges");
  vocab.bos_id = token_id(metadata, "tokenizer.ggml.bos_token_id");
  vocab.eos_id = token_id(metadata, "tokenizer.ggml.eos_token_id");
  vocab.unk_id = token_id(metadata, "tokenizer.ggml.unknown_token_id");
  // "seperator" is how llama.cpp's gguf-py spells the key.
  vocab.sep_id = token_id(metadata, "tokenizer.ggml.seperator_token_id");
  vocab.cls_id = token_id(metadata, "tokenizer.ggml.cls_token_id");
  vocab.add_bos = metadata.get_bool("tokenizer.ggml.add_bos_token");
  vocab.add_eos = metadata.get_bool("tokenizer.ggml.add_eos_token");
  vocab.add_space_prefix = metadata.get_bool("tokenizer.ggml.add_space_prefix");
  return vocab;
}

Tokenizer load_gguf_tokenizer(const std::string& path) {
  const GgufMetadata metadata = GgufMetadata::read(path);
  return Tokenizer::from_llama_vocab(gguf_llama_vocab(metadata), path);
}

}  // namespace hadron
