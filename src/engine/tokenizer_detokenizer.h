// The engine's Detokenizer over a Hugging Face tokenizer.
#pragma once

#include "engine/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace hadron {

class TokenizerDetokenizer final : public Detokenizer {
 public:
  explicit TokenizerDetokenizer(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  std::unique_ptr<TextStream> start(bool skip_special_tokens) const override;

 private:
  const Tokenizer& tokenizer_;
};

}  // namespace hadron
