// The bytes each token of a tokenizer stands for, as a TokenVocabulary for masks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grammar/token_mask.h"

namespace hadron {
class Tokenizer;
}

namespace hadron::grammar {

// Byte-level tokens give their GPT-2 bytes, "<0xXX>" byte-fallback tokens their byte,
// SentencePiece pieces their text with U+2581 as a space; special tokens none (never
// allowed by a grammar).
std::vector<std::string> token_bytes(const Tokenizer& tokenizer);

TokenVocabulary make_token_vocabulary(const Tokenizer& tokenizer,
                                      std::vector<int32_t> eos_token_ids);

}  // namespace hadron::grammar
