// The WordPiece model of Hugging Face tokenizers (BERT): greedy longest-match-first over the
// vocabulary, continuation pieces written with a prefix ("##"), and the unknown token for a
// word that cannot be covered or is too long.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/model.h"

namespace hadron::tok {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

class WordPieceModel final : public Model {
 public:
  // vocab: token -> id. Throws InputError for a bad id or an unk_token missing from vocab.
  WordPieceModel(const std::vector<std::pair<std::string, int32_t>>& vocab,
                 WordPieceOptions options);

  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  WordPieceOptions options_;
  int32_t unk_id_ = 0;
};

}  // namespace hadron::tok
