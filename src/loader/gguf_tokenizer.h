// The tokenizer of a llama.cpp GGUF file, from its tokenizer.ggml.* metadata.
#pragma once

#include <string>

#include "loader/gguf.h"
#include "tokenizer/llama_vocab.h"
#include "tokenizer/tokenizer.h"

namespace hadron {

// The vocabulary keys of `metadata`; InputError naming the file and key when one is missing
// or has the wrong type.
tok::LlamaVocab gguf_llama_vocab(const GgufMetadata& metadata);

// Reads only the metadata of the GGUF file at `path` and builds its tokenizer.
Tokenizer load_gguf_tokenizer(const std::string& path);

}  // namespace hadron
