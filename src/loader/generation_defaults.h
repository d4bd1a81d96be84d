// What a model folder's generation_config.json sets: the defaults `hadron generate` and the
// server apply where the user or the request leaves a field out, and the end-of-sequence ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hadron {

struct GenerationDefaults {
  std::optional<float> temperature, top_p;  // temperature unset when do_sample is false
  std::optional<int> top_k;
  std::vector<int32_t> eos_token_ids;
};

// Empty defaults when the folder has no generation_config.json; InputError when it is invalid.
GenerationDefaults read_generation_defaults(const std::string& model_dir);

}  // namespace hadron
