#include "engine/sequence.h"

namespace hadron {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
  }
  return "unknown";
}

Sequence::Sequence(uint64_t request_id, int index, std::vector<int32_t> prompt,
                   std::shared_ptr<const SamplingParams> params, uint64_t seed, uint64_t cache_salt)
    : request_id(request_id),
      index(index),
      params(std::move(params)),
      tokens(std::move(prompt)),
      prompt_len(static_cast<int64_t>(tokens.size())),
      cache_salt(cache_salt),
      sampler(*this->params, seed) {}

}  // namespace hadron
