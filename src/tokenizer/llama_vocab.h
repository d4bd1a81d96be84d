// A vocabulary as llama.cpp model files describe it (the tokenizer.ggml.* keys of GGUF), from
// which Tokenizer::from_llama_vocab builds the Hugging Face pipeline the model was converted
// from. The file reading is loader/'s (loader/gguf_tokenizer.h); this is plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hadron::tok {

// tokenizer.ggml.token_type values.
enum class LlamaTokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct LlamaVocab {
  // "gpt2": byte-level BPE with merges; "llama": SentencePiece BPE ranked by scores, with
  // byte fallback; "bert": WordPiece (tokens written with llama.cpp's U+2581 word prefix).
  std::string model;
  std::string pre = "default";  // tokenizer.ggml.pre: which split regexes and normalizer
  std::vector<std::string> tokens;
  std::vector<float> scores;                // "llama": one per token, higher merges first
  std::vector<LlamaTokenType> token_types;  // one per token; empty: all normal
  std::vector<std::string> merges;          // "gpt2": "left right", highest priority first
  std::optional<int32_t> bos_id, eos_id, unk_id, sep_id, cls_id;
  std::optional<bool> add_bos, add_eos;  // absent: the model type's default
  std::optional<bool> add_space_prefix;  // "llama": absent means true
};

// The pre-tokenizer names (tokenizer.ggml.pre) that from_llama_vocab knows, comma-separated.
std::string supported_llama_pre_types();

}  // namespace hadron::tok
