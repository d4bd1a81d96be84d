#include "tokenizer/model.h"

#include <algorithm>

#include "core/error.h"

namespace hadron::tok {
namespace {

// Real vocabularies stay under a million tokens; larger ids are corrupt files.
constexpr int32_t kMaxId = 1 << 24;

}  // namespace

Model::Model(const std::vector<std::pair<std::string, int32_t>>& vocab) {
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab) {
    if (id < 0 || id > kMaxId) {
      input_error("tokenizer: vocabulary id {} of \"{}\" is {}", id, token,
                  id < 0 ? "negative" : "implausibly large");
    }
    max_id = std::max(max_id, id);
  }
  id_to_token_.resize(static_cast<size_t>(max_id) + 1);
  for (const auto& [token, id] : vocab) {
    vocab_.put(token, id);
    id_to_token_[id] = token;
  }
}

const std::string& Model::id_to_token(int32_t id) const {
  static const std::string empty;
  if (id < 0 || id >= size()) return empty;
  return id_to_token_[id];
}

}  // namespace hadron::tok
