// A Hugging Face tokenizer (tokenizer.json, vocab.json + merges.txt, or a tiktoken file) that
// gives exactly the ids and text of the Rust `tokenizers` library for BPE models: byte-level
// (Qwen, Llama 3, DeepSeek-V3, gpt-oss) and SentencePiece-style with byte fallback (Llama 2,
// Mistral).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hadron {

namespace tok {
struct TokenizerState;
struct LlamaVocab;
struct TiktokenVocab;
}  // namespace tok

class Tokenizer {
 public:
  // A tokenizer.json file, or a folder holding tokenizer.json, or vocab.json + merges.txt
  // (Qwen2 style), or a tiktoken file (tiktoken.model, *.tiktoken; see tokenizer/tiktoken.h);
  // the last two take their added tokens from tokenizer_config.json when it is there.
  // Throws InputError naming the file for anything unreadable, malformed or unsupported.
  static Tokenizer load(const std::string& file_or_dir);
  // Whether `dir` holds one of the tokenizer files load() reads.
  static bool folder_has_tokenizer(const std::string& dir);
  // tokenizer.json contents; `origin` names them in error messages.
  static Tokenizer from_json_text(std::string_view json_text, const std::string& origin);
  // A llama.cpp vocabulary (see tokenizer/llama_vocab.h; loader/gguf_tokenizer.h reads one from
  // a GGUF file); `origin` names it in error messages.
  static Tokenizer from_llama_vocab(const tok::LlamaVocab& vocab, const std::string& origin);
  // A tiktoken vocabulary (see tokenizer/tiktoken.h): byte-level BPE over its ranks, its split
  // regex, no normalizer, its added tokens; `origin` names it in error messages.
  static Tokenizer from_tiktoken(const tok::TiktokenVocab& vocab, const std::string& origin);

  // Ids of `text`. Invalid UTF-8 is first replaced by U+FFFD per maximal ill-formed subpart
  // (what the reference sees through Node's or Python's lossy decoding). add_special_tokens
  // applies the post-processor (e.g. BOS); special tokens written in the text are always found.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const;
  // Text of `ids`; unknown ids are ignored, special tokens dropped on request.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The token as written in the vocabulary; empty for an unknown id.
  std::string id_to_token(int32_t id) const;
  // One past the largest id (model vocabulary and added tokens).
  int32_t vocab_size() const;
  // An added token marked special (e.g. <|im_end|>, <|begin_of_text|>).
  bool is_special(int32_t id) const;

 private:
  friend class IncrementalDecoder;
  explicit Tokenizer(std::shared_ptr<const tok::TokenizerState> state);
  // True when the text of ids so far may still change with later ids (a ByteFallback decoder
  // turns a whole run of <0xXX> tokens into U+FFFDs when the run is not valid UTF-8).
  bool text_may_change(std::span<const int32_t> ids, bool skip_special_tokens) const;
  // False when streaming must decode from the start of the sequence (Decoder::is_local).
  bool decoder_is_local() const;
  std::shared_ptr<const tok::TokenizerState> state_;
};

// Streaming detokenization: push ids one at a time and get the text they complete. Text is
// held back while it ends in an incomplete UTF-8 character (or, with a ByteFallback decoder, in
// a run of byte tokens), so no piece ever splits a character, and the concatenation of all
// pieces plus finish() equals tokenizer.decode(all ids).
class IncrementalDecoder {
 public:
  IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special_tokens);

  // Text completed by `id` (often empty while a character is incomplete).
  std::string push(int32_t id);
  // Whatever is still held back, e.g. U+FFFD for bytes that never completed a character.
  std::string finish();

 private:
  Tokenizer tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> ids_;  // the previous emission's ids, then the ids not yet emitted
  std::string prefix_;        // decode of the previous emission's ids (already emitted)
  size_t prefix_idx_ = 0;     // number of the previous emission's ids at the front of ids_
};

}  // namespace hadron
