#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace hadron {
namespace {

bool ends_with_replacement_char(const std::string& text) {
  return text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

}  // namespace

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

// The DecodeStream scheme of HF tokenizers: decode a window made of the ids of the previous
// emission and the new ids (so decoders that treat the first token specially, such as Strip or
// Metaspace, see the same context in both decodes), and emit what follows the previous
// emission's text once the text no longer ends in U+FFFD (an incomplete character) nor in a
// run of ByteFallback byte tokens. Unlike DecodeStream, the text of the previous emission never
// changes afterwards, which the check below enforces.
std::string IncrementalDecoder::push(int32_t id) {
  ids_.push_back(id);
  if (tokenizer_.text_may_change(ids_, skip_special_tokens_)) return {};
  const std::string text = tokenizer_.decode(ids_, skip_special_tokens_);
  if (text.size() <= prefix_.size() || ends_with_replacement_char(text)) return {};
  HADRON_CHECK(text.compare(0, prefix_.size(), prefix_) == 0,
               "incremental decode: \"{}\" does not extend \"{}\"", text, prefix_);
  std::string new_text = text.substr(prefix_.size());
  if (!tokenizer_.decoder_is_local()) {  // keep the whole sequence as the window
    prefix_ = text;
    return new_text;
  }
  const size_t n_emitted = ids_.size() - prefix_idx_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_idx_));
  prefix_ = tokenizer_.decode(ids_, skip_special_tokens_);
  prefix_idx_ = n_emitted;
  return new_text;
}

std::string IncrementalDecoder::finish() {
  std::string text = tokenizer_.decode(ids_, skip_special_tokens_);
  ids_.clear();
  prefix_idx_ = 0;
  std::string rest = text.size() > prefix_.size() ? text.substr(prefix_.size()) : std::string();
  prefix_.clear();
  return rest;
}

}  // namespace hadron
