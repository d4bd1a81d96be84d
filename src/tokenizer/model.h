// The model step of a tokenizer: turns one pre-tokenized word into ids (BPE, WordPiece), over
// a vocabulary of token strings and ids that this base class holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/flat_map.h"

namespace hadron::tok {

class Model {
 public:
  virtual ~Model() = default;
  // Appends the ids of one pre-tokenized word.
  virtual void tokenize(std::string_view word, std::vector<int32_t>& out) const = 0;

  // The id of a token as written in the vocabulary.
  std::optional<int32_t> token_to_id(std::string_view token) const { return vocab_.find(token); }
  // Empty when the id is not in the vocabulary.
  const std::string& id_to_token(int32_t id) const;
  // One past the largest id in the vocabulary.
  int32_t size() const { return static_cast<int32_t>(id_to_token_.size()); }

 protected:
  // vocab: token -> id. Throws InputError for a negative or implausibly large id.
  explicit Model(const std::vector<std::pair<std::string, int32_t>>& vocab);

  StringMap vocab_;  // token as written in the file -> id
  std::vector<std::string> id_to_token_;
};

}  // namespace hadron::tok
