// The added vocabulary of Hugging Face tokenizers: tokens such as <|im_start|> that are found
// in the text before the model runs, leftmost-longest, honouring lstrip/rstrip/single_word.
// Tokens with normalized=false are found in the raw text; the others after normalization.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/function_ref.h"

namespace hadron::tok {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool single_word = false;
};

// The added_tokens array of tokenizer.json ({content, id, special, lstrip, rstrip, normalized,
// single_word}); a missing id is 0 and `normalized` defaults to !special.
std::vector<AddedToken> added_tokens_from_json(const nlohmann::json& tokens);

// Receives a run of text with no added token in it and its start offset in the input.
using TextSink = FunctionRef<void(std::string_view text, size_t offset)>;
using TokenSink = FunctionRef<void(int32_t id)>;

// Leftmost-longest matching over a set of added tokens (one of the two tries of HF).
class AddedTokenMatcher {
 public:
  // `patterns[i]` is what to look for (the normalized content for normalized tokens).
  AddedTokenMatcher(std::vector<AddedToken> tokens, const std::vector<std::string>& patterns);

  // Splits `text` into runs of plain text and added tokens, in order.
  void split(std::string_view text, TextSink on_text, TokenSink on_token) const;

 private:
  struct Node {
    int32_t token_idx = -1;  // a pattern ends here
    std::vector<std::pair<unsigned char, int32_t>> children;
  };
  // Length of the longest pattern at text[pos] and its token, or 0.
  size_t longest_match(std::string_view text, size_t pos, int32_t& token_idx) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_{1};
  bool first_byte_[256] = {};
};

}  // namespace hadron::tok
