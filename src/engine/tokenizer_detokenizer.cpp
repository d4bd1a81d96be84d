#include "engine/tokenizer_detokenizer.h"

namespace hadron {
namespace {

class IncrementalTextStream final : public TextStream {
 public:
  IncrementalTextStream(const Tokenizer& tokenizer, bool skip_special_tokens)
      : decoder_(tokenizer, skip_special_tokens) {}
  std::string push(int32_t token) override { return decoder_.push(token); }
  std::string finish() override { return decoder_.finish(); }

 private:
  IncrementalDecoder decoder_;
};

}  // namespace

std::unique_ptr<TextStream> TokenizerDetokenizer::start(bool skip_special_tokens) const {
  return std::make_unique<IncrementalTextStream>(tokenizer_, skip_special_tokens);
}

}  // namespace hadron
