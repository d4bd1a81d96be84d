#include "fixture_util.h"

#include <cmath>
#include <fstream>

namespace hadron::testing {

std::string fixture_dir(const std::string& name) {
  return std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/" + name;
}

std::vector<int32_t> Fixture::sequence(size_t i) const {
  std::vector<int32_t> tokens = prompts[i];
  tokens.insert(tokens.end(), continuations[i].begin(), continuations[i].end());
  return tokens;
}

Fixture read_fixture(const std::string& name) {
  std::ifstream in(fixture_dir(name) + "/reference.json");
  const nlohmann::json reference = nlohmann::json::parse(in);
  Fixture fixture;
  fixture.prompts = reference["prompts"].get<std::vector<std::vector<int32_t>>>();
  fixture.continuations = reference["continuations"].get<std::vector<std::vector<int32_t>>>();
  for (size_t i = 0; i < fixture.prompts.size(); ++i)
    fixture.logits.push_back(read_npy(fixture_dir(name) + "/logits_" + std::to_string(i) + ".npy"));
  return fixture;
}

double relative_error(const float* ours, const NpyArray& ref, int64_t row_begin, int64_t n_rows) {
  const int64_t vocab = ref.shape[1];
  double max_diff = 0, max_ref = 0;
  for (int64_t i = 0; i < n_rows * vocab; ++i) {
    const float expected = ref.values[row_begin * vocab + i];
    max_diff = std::max(max_diff, std::fabs(double{ours[i]} - expected));
    max_ref = std::max(max_ref, std::fabs(double{expected}));
  }
  return max_diff / max_ref;
}

}  // namespace hadron::testing
