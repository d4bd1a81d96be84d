// Tokenizer::from_llama_vocab: the Hugging Face pipeline a llama.cpp vocabulary was converted
// from. "gpt2" vocabularies hold the byte-level BPE tokens and merges of tokenizer.json;
// "llama" ones the SentencePiece pieces and scores, from which the merges are rebuilt the way
// transformers' SentencePieceExtractor builds them for LlamaTokenizerFast; "bert" ones the
// WordPiece vocabulary of BertTokenizerFast.
#include "tokenizer/llama_vocab.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/llama_pre_types.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"
#include "tokenizer/wordpiece_model.h"

namespace hadron {
namespace {

using nlohmann::json;
using tok::AddedToken;
using tok::LlamaTokenType;
using tok::LlamaVocab;
using tok::TokenizerState;

constexpr const char* kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

LlamaTokenType type_of(const LlamaVocab& vocab, size_t id) {
  return vocab.token_types.empty() ? LlamaTokenType::kNormal : vocab.token_types[id];
}

void validate(const LlamaVocab& vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) input_error("the vocabulary has no tokens");
  if (!vocab.token_types.empty() && vocab.token_types.size() != n) {
    input_error("{} token types for {} tokens", vocab.token_types.size(), n);
  }
  for (const LlamaTokenType type : vocab.token_types) {
    if (type < LlamaTokenType::kUndefined || type > LlamaTokenType::kByte) {
      input_error("token type {} is not one of 0..6", static_cast<int32_t>(type));
    }
  }
  if (vocab.model == "llama" && vocab.scores.size() != n) {
    input_error("{} scores for {} tokens", vocab.scores.size(), n);
  }
  for (const auto& [name, id] : {std::pair{"bos", vocab.bos_id},
                                 {"eos", vocab.eos_id},
                                 {"unknown", vocab.unk_id},
                                 {"separator", vocab.sep_id},
                                 {"cls", vocab.cls_id}}) {
    if (id && (*id < 0 || static_cast<size_t>(*id) >= n)) {
      input_error("the {} token id {} is outside the {} tokens", name, *id, n);
    }
  }
}

// "[PAD<id>]" at its own id: convert_hf_to_gguf.py's filler for an id the Hugging Face
// tokenizer does not have (typed user-defined or unknown by older versions, unused by newer).
bool is_filler(const std::string& token, size_t id) { return token == fmt::format("[PAD{}]", id); }

// Control and user-defined tokens are added tokens of tokenizer.json, found in the raw text;
// control ones (and the unknown token) are special.
std::vector<AddedToken> added_tokens(const LlamaVocab& vocab,
                                     const std::vector<std::string>& tokens) {
  std::vector<AddedToken> added;
  for (size_t id = 0; id < tokens.size(); ++id) {
    const LlamaTokenType type = type_of(vocab, id);
    const bool special = type == LlamaTokenType::kControl || type == LlamaTokenType::kUnknown;
    if ((!special && type != LlamaTokenType::kUserDefined) || tokens[id].empty()) continue;
    if (is_filler(tokens[id], id)) continue;
    AddedToken token;
    token.content = tokens[id];
    token.id = static_cast<int32_t>(id);
    token.special = special;
    added.push_back(std::move(token));
  }
  return added;
}

// Merges in SentencePieceExtractor's order: every split of every piece into two pieces of the
// vocabulary (by the pieces' ids), then a stable sort by the merged piece's score, highest first.
std::vector<std::pair<std::string, std::string>> merges_from_scores(const LlamaVocab& vocab,
                                                                    const tok::StringMap& ids) {
  struct Merge {
    int32_t left, right;
    float score;
  };
  std::vector<Merge> merges;
  std::vector<Merge> local;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const LlamaTokenType type = type_of(vocab, id);
    if (type != LlamaTokenType::kNormal && type != LlamaTokenType::kUndefined) continue;
    const std::string& piece = vocab.tokens[id];
    local.clear();
    for (size_t pos = utf8_len(piece[0]); pos < piece.size(); pos += utf8_len(piece[pos])) {
      const std::optional<int32_t> left = ids.find(std::string_view(piece).substr(0, pos));
      const std::optional<int32_t> right = ids.find(std::string_view(piece).substr(pos));
      if (left && right) local.push_back({*left, *right, vocab.scores[id]});
    }
    std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return a.left != b.left ? a.left < b.left : a.right < b.right;
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(),
                   [](const Merge& a, const Merge& b) { return a.score > b.score; });
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (const Merge& m : merges) out.emplace_back(vocab.tokens[m.left], vocab.tokens[m.right]);
  return out;
}

std::optional<std::string> unk_token(const LlamaVocab& vocab) {
  if (vocab.unk_id) return vocab.tokens[*vocab.unk_id];
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (type_of(vocab, id) == LlamaTokenType::kUnknown) return vocab.tokens[id];
  }
  return std::nullopt;
}

// LlamaTokenizerFast as Llama 2's tokenizer.json has it (legacy): a normalizer that prefixes
// each run of text between added tokens with U+2581 and writes spaces as U+2581, BPE with byte
// fallback, and the decoder that undoes both.
void build_spm(const LlamaVocab& vocab, TokenizerState& state) {
  const bool add_space_prefix = vocab.add_space_prefix.value_or(true);
  json normalizer = {{"type", "Sequence"}, {"normalizers", json::array()}};
  if (add_space_prefix)
    normalizer["normalizers"].push_back({{"type", "Prepend"}, {"prepend", kSpace}});
  normalizer["normalizers"].push_back(
      {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSpace}});
  state.normalizer = tok::Normalizer::from_json(normalizer);
  std::vector<std::pair<std::string, int32_t>> model_vocab;
  tok::StringMap ids;
  tok::BpeOptions options;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    model_vocab.emplace_back(vocab.tokens[id], static_cast<int32_t>(id));
    ids.insert(vocab.tokens[id], static_cast<int32_t>(id));
    options.byte_fallback |= type_of(vocab, id) == LlamaTokenType::kByte;
  }
  options.fuse_unk = true;
  options.unk_token = unk_token(vocab);
  state.model =
      std::make_unique<tok::BpeModel>(model_vocab, merges_from_scores(vocab, ids), options);
  json decoder = {{"type", "Sequence"},
                  {"decoders",
                   {{{"type", "Replace"}, {"pattern", {{"String", kSpace}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}}}}};
  if (add_space_prefix) {
    decoder["decoders"].push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  }
  state.decoder = tok::Decoder::from_json(decoder);
}

// A byte-level BPE tokenizer.json: the model holds the tokens that are not added tokens.
void build_byte_level_bpe(const LlamaVocab& vocab, TokenizerState& state) {
  const tok::LlamaPreType pre = tok::llama_pre_type(vocab.pre);
  state.normalizer = tok::Normalizer::from_json(pre.normalizer);
  state.pre_tokenizer = tok::PreTokenizer::from_json(pre.pre_tokenizer);
  std::vector<std::pair<std::string, int32_t>> model_vocab;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const LlamaTokenType type = type_of(vocab, id);
    if (type == LlamaTokenType::kControl || type == LlamaTokenType::kUserDefined ||
        type == LlamaTokenType::kUnused) {
      continue;
    }
    model_vocab.emplace_back(vocab.tokens[id], static_cast<int32_t>(id));
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(vocab.merges.size());
  for (const std::string& merge : vocab.merges) {
    const size_t space = merge.find(' ');
    if (space == std::string::npos) input_error("merge \"{}\" is not two tokens", merge);
    merges.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }
  tok::BpeOptions options;
  options.byte_level = true;
  options.ignore_merges = pre.ignore_merges;
  state.model = std::make_unique<tok::BpeModel>(model_vocab, merges, options);
  state.decoder = tok::Decoder::from_json({{"type", "ByteLevel"}});
}

// A WordPiece token as tokenizer.json writes it: llama.cpp writes word-initial pieces with a
// U+2581 prefix and continuation pieces without their "##"; "[X]" tokens are kept as they are.
std::string wordpiece_token(const std::string& token) {
  if (token.size() >= 2 && token.front() == '[' && token.back() == ']') return token;
  if (token.starts_with(kSpace)) return token.substr(std::string_view(kSpace).size());
  return "##" + token;
}

// BertTokenizerFast of an uncased model (llama.cpp's WPM tokenizer always lowercases):
// BertNormalizer, BertPreTokenizer, WordPiece and its decoder. Returns the tokens as written
// in the model's vocabulary.
std::vector<std::string> build_wordpiece(const LlamaVocab& vocab, TokenizerState& state) {
  state.normalizer = tok::Normalizer::from_json({{"type", "BertNormalizer"}, {"lowercase", true}});
  state.pre_tokenizer = tok::PreTokenizer::from_json({{"type", "BertPreTokenizer"}});
  std::vector<std::string> tokens;
  std::vector<std::pair<std::string, int32_t>> model_vocab;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    tokens.push_back(wordpiece_token(vocab.tokens[id]));
    model_vocab.emplace_back(tokens.back(), static_cast<int32_t>(id));
  }
  tok::WordPieceOptions options;
  if (const std::optional<std::string> unk = unk_token(vocab))
    options.unk_token = wordpiece_token(*unk);
  state.model = std::make_unique<tok::WordPieceModel>(model_vocab, options);
  state.decoder =
      tok::Decoder::from_json({{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}});
  return tokens;
}

// The ids the post-processor puts around a sequence: BOS (SentencePiece and byte-level BPE) or
// [CLS] ... [SEP] (WordPiece), unless the file's add_bos/add_eos flags say otherwise.
void add_template_ids(const LlamaVocab& vocab, TokenizerState& state) {
  const bool bert = vocab.model == "bert";
  const std::optional<int32_t> first = bert && vocab.cls_id ? vocab.cls_id : vocab.bos_id;
  const std::optional<int32_t> last = bert && vocab.sep_id ? vocab.sep_id : vocab.eos_id;
  if (vocab.add_bos.value_or(bert || vocab.model == "llama")) {
    if (!first) input_error("a BOS/CLS token is to be added but its id is not given");
    state.prefix_ids.push_back(*first);
  }
  if (vocab.add_eos.value_or(bert)) {
    if (!last) input_error("an EOS/SEP token is to be added but its id is not given");
    state.suffix_ids.push_back(*last);
  }
}

}  // namespace

Tokenizer Tokenizer::from_llama_vocab(const LlamaVocab& vocab, const std::string& origin) {
  try {
    validate(vocab);
    auto state = std::make_shared<TokenizerState>();
    std::vector<std::string> tokens = vocab.tokens;
    if (vocab.model == "llama") {
      build_spm(vocab, *state);
    } else if (vocab.model == "gpt2") {
      build_byte_level_bpe(vocab, *state);
    } else if (vocab.model == "bert") {
      tokens = build_wordpiece(vocab, *state);
    } else {
      input_error("tokenizer.ggml.model \"{}\" is not supported (supported: llama, gpt2, bert)",
                  vocab.model);
    }
    add_template_ids(vocab, *state);
    // The ids the post-processor adds are ids of the tokenizer even when they name a token
    // that is neither in the model nor added (an unused one).
    int32_t n_ids = 0;
    for (const int32_t id : state->prefix_ids) n_ids = std::max(n_ids, id + 1);
    for (const int32_t id : state->suffix_ids) n_ids = std::max(n_ids, id + 1);
    state->finalize(added_tokens(vocab, tokens), n_ids);
    return Tokenizer(std::move(state));
  } catch (const InputError& e) {
    input_error("{}: {}", origin, e.what());
  }
}

}  // namespace hadron
