// llama.cpp's byte-level BPE pre-tokenizer names (tokenizer.ggml.pre) and the Hugging Face
// normalizer and pre-tokenizer of the tokenizer.json each name stands for.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hadron::tok {

struct LlamaPreType {
  nlohmann::json normalizer;     // tokenizer.json "normalizer" (null: none)
  nlohmann::json pre_tokenizer;  // tokenizer.json "pre_tokenizer", ending in ByteLevel
  bool ignore_merges = false;    // the BPE model's ignore_merges
};

// Throws InputError naming `name` and the supported names when it is not one of them.
LlamaPreType llama_pre_type(const std::string& name);

}  // namespace hadron::tok
