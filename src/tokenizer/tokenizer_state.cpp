#include "tokenizer/tokenizer_state.h"

#include <algorithm>

namespace hadron::tok {
void TokenizerState::finalize(std::vector<AddedToken> tokens, int32_t n_ids) {
  int32_t size = std::max(model->size(), n_ids);
  for (const AddedToken& token : tokens) size = std::max(size, token.id + 1);
  id_tokens.assign(size, {});
  special.assign(size, false);
  for (int32_t id = 0; id < model->size(); ++id) id_tokens[id] = model->id_to_token(id);

  std::vector<AddedToken> raw, normalized;
  std::vector<std::string> raw_patterns, normalized_patterns;
  for (const AddedToken& token : tokens) {
    added_ids.put(token.content, token.id);
    id_tokens[token.id] = token.content;
    special[token.id] = token.special;
    if (token.normalized) {
      std::string pattern = token.content;
      normalizer.normalize(pattern);
      normalized.push_back(token);
      normalized_patterns.push_back(std::move(pattern));
    } else {
      raw.push_back(token);
      raw_patterns.push_back(token.content);
    }
  }
  if (!raw.empty()) raw_matcher.emplace(std::move(raw), raw_patterns);
  if (!normalized.empty()) normalized_matcher.emplace(std::move(normalized), normalized_patterns);
  added_tokens = std::move(tokens);

  decoder_is_local = decoder.is_local();
  if (decoder.has_byte_fallback()) {
    byte_fallback.resize(id_tokens.size());
    for (size_t id = 0; id < id_tokens.size(); ++id)
      byte_fallback[id] = Decoder::is_byte_token(id_tokens[id]);
  }
  if (decoder.byte_level_only()) {
    id_bytes.resize(id_tokens.size());
    for (size_t id = 0; id < id_tokens.size(); ++id)
      id_bytes[id] = Decoder::byte_level_bytes(id_tokens[id]);
  }
}

}  // namespace hadron::tok
