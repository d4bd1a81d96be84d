// Reading the transformers fixtures made by tools/make_fixtures.py.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/npy.h"

namespace hadron::testing {

std::string fixture_dir(const std::string& name);

struct Fixture {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<int32_t>> continuations;
  std::vector<NpyArray> logits;  // [len(prompt) + len(continuation), vocab] per prompt

  // prompt i followed by its continuation
  std::vector<int32_t> sequence(size_t i) const;
};

Fixture read_fixture(const std::string& name);

// max |ours - ref| / max |ref| over rows [row_begin, row_begin + n_rows) of ref.
double relative_error(const float* ours, const NpyArray& ref, int64_t row_begin, int64_t n_rows);

}  // namespace hadron::testing
