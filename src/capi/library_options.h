// The options of an embedded engine: the CLI's engine flags given as key/value strings and
// parsed by the CLI's own code (app/engine_flags), so the two never drift apart.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/loaded_model.h"

namespace hadron::capi {

struct LibraryOptions {
  EngineOptions engine;
  size_t max_queued_requests = 4096;
};

// model_dir empty: the shipped models/default. Keys are flag names without dashes, with '_'
// or '-' between words ("max_model_len"). InputError on an unknown key or a bad value.
LibraryOptions parse_library_options(const std::string& model_dir,
                                     const std::vector<std::pair<std::string, std::string>>& kv);

}  // namespace hadron::capi
