#include "grammar/tokenizer_vocabulary.h"

#include "core/utf8.h"
#include "grammar/char_class.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace hadron::grammar {
namespace {

std::string piece_bytes(const Tokenizer& tokenizer, int32_t id) {
  const std::string piece = tokenizer.id_to_token(id);
  const std::string text = tokenizer.decode(std::vector<int32_t>{id}, false);
  if (std::optional<std::string> bytes = tok::byte_level_to_bytes(piece);
      bytes && utf8_lossy(*bytes) == text)
    return *bytes;
  if (piece.size() == 6 && piece.starts_with("<0x") && piece.back() == '>' &&
      hex_digit(piece[3]) >= 0 && hex_digit(piece[4]) >= 0)
    return std::string(1, static_cast<char>(hex_digit(piece[3]) * 16 + hex_digit(piece[4])));
  const std::string kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  if (piece.find(kSpace) == std::string::npos) return text;
  std::string out;
  for (size_t pos = 0; pos < piece.size();) {
    if (piece.compare(pos, kSpace.size(), kSpace) == 0) {
      out += ' ';
      pos += kSpace.size();
    } else {
      out += piece[pos++];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> token_bytes(const Tokenizer& tokenizer) {
  std::vector<std::string> out(tokenizer.vocab_size());
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id)
    if (!tokenizer.is_special(id)) out[id] = piece_bytes(tokenizer, id);
  return out;
}

TokenVocabulary make_token_vocabulary(const Tokenizer& tokenizer,
                                      std::vector<int32_t> eos_token_ids) {
  return TokenVocabulary(token_bytes(tokenizer), std::move(eos_token_ids));
}

}  // namespace hadron::grammar
