#include "tokenizer/wordpiece_model.h"

#include "core/error.h"

namespace hadron::tok {
namespace {

// Bytes of the last UTF-8 character of non-empty valid `text`.
size_t last_char_bytes(std::string_view text) {
  size_t n = 1;
  while (n < text.size() && (static_cast<unsigned char>(text[text.size() - n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace

WordPieceModel::WordPieceModel(const std::vector<std::pair<std::string, int32_t>>& vocab,
                               WordPieceOptions options)
    : Model(vocab), options_(std::move(options)) {
  const std::optional<int32_t> unk = vocab_.find(options_.unk_token);
  if (!unk)
    input_error("tokenizer: WordPiece unk_token \"{}\" is not in the vocabulary",
                options_.unk_token);
  unk_id_ = *unk;
}

// WordPiece::tokenize of HF: from each start, the longest piece in the vocabulary (prefixed
// when not at the word's start); any uncovered position makes the whole word unknown.
void WordPieceModel::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  size_t n_chars = 0;
  for (const char c : word) n_chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  if (n_chars > options_.max_input_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  const size_t first = out.size();
  std::string key;
  for (size_t start = 0; start < word.size();) {
    std::optional<int32_t> id;
    size_t end = word.size();
    for (; end > start; end -= last_char_bytes(word.substr(start, end - start))) {
      key.assign(start > 0 ? options_.continuing_subword_prefix : "");
      key.append(word.substr(start, end - start));
      if ((id = vocab_.find(key))) break;
    }
    if (!id) {
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(*id);
    start = end;
  }
}

}  // namespace hadron::tok
