#include "tokenizer/tokenizer.h"

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/tokenizer_state.h"

namespace hadron {

using tok::TokenizerState;

Tokenizer::Tokenizer(std::shared_ptr<const TokenizerState> state) : state_(std::move(state)) {}

namespace {

// Normalizes one run of text between raw added tokens, finds the normalized added tokens in
// it, pre-tokenizes the rest and runs the model on each word.
void encode_run(const TokenizerState& state, std::string_view run, bool at_start,
                std::vector<int32_t>& ids) {
  const auto model_words = [&](std::string_view piece, size_t offset) {
    state.pre_tokenizer.split(piece, at_start && offset == 0, [&](std::string_view word, bool) {
      state.model->tokenize(word, ids);
    });
  };
  const auto on_token = [&](int32_t id) { ids.push_back(id); };
  if (state.normalizer.empty()) {
    if (state.normalized_matcher)
      state.normalized_matcher->split(run, model_words, on_token);
    else
      model_words(run, 0);
    return;
  }
  std::string normalized(run);
  state.normalizer.normalize(normalized);
  if (state.normalized_matcher)
    state.normalized_matcher->split(normalized, model_words, on_token);
  else
    model_words(normalized, 0);
}

}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const TokenizerState& state = *state_;
  std::string sanitized;
  if (!is_valid_utf8(text)) {
    sanitized = utf8_lossy(text);
    text = sanitized;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  if (add_special_tokens) ids = state.prefix_ids;
  const auto on_text = [&](std::string_view run, size_t offset) {
    encode_run(state, run, offset == 0, ids);
  };
  if (state.raw_matcher) {
    state.raw_matcher->split(text, on_text, [&](int32_t id) { ids.push_back(id); });
  } else if (!text.empty()) {
    on_text(text, 0);
  }
  if (add_special_tokens) ids.insert(ids.end(), state.suffix_ids.begin(), state.suffix_ids.end());
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  const TokenizerState& state = *state_;
  const auto n_ids = static_cast<int32_t>(state.id_tokens.size());
  const auto keep = [&](int32_t id) {
    return id >= 0 && id < n_ids && !(skip_special_tokens && state.special[id]) &&
           !state.id_tokens[id].empty();
  };
  if (!state.id_bytes.empty()) {  // ByteLevel decoder: concatenate bytes, then lossy UTF-8
    std::string bytes;
    for (const int32_t id : ids) {
      if (keep(id)) bytes += state.id_bytes[id];
    }
    return is_valid_utf8(bytes) ? bytes : utf8_lossy(bytes);
  }
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    if (keep(id)) tokens.push_back(state.id_tokens[id]);
  }
  return state.decoder.decode(std::move(tokens));
}

bool Tokenizer::text_may_change(std::span<const int32_t> ids, bool skip_special_tokens) const {
  const TokenizerState& state = *state_;
  if (state.byte_fallback.empty()) return false;
  for (size_t i = ids.size(); i-- > 0;) {
    const int32_t id = ids[i];
    if (id < 0 || id >= vocab_size() || (skip_special_tokens && state.special[id])) continue;
    return state.byte_fallback[id];
  }
  return false;
}

bool Tokenizer::decoder_is_local() const { return state_->decoder_is_local; }

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const std::optional<int32_t> id = state_->added_ids.find(token)) return id;
  return state_->model->token_to_id(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return state_->id_tokens[id];
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(state_->id_tokens.size()); }

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_size() && state_->special[id];
}

}  // namespace hadron
