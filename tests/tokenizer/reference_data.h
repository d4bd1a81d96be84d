// Test data for the tokenizer tests: the corpus, the real tokenizer.json files from the npm
// packages in tests/tokenizer/node_modules, and reference results from Hugging Face tokenizers
// made by reference.mjs (run on first use, cached in the build tree).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hadron::test {

struct CorpusSample {
  std::string file;
  size_t index;
  std::string bytes;  // possibly invalid UTF-8
};

// Every sample of tests/tokenizer/corpus/*.txt, in the order reference.mjs reads them.
const std::vector<CorpusSample>& corpus_samples();

// tests/tokenizer/node_modules; throws std::runtime_error with instructions when missing.
std::filesystem::path node_modules_dir();

// The reference results for tokenizer `name` (see reference.mjs), generated if needed.
nlohmann::json reference_results(const std::string& name);

// The names reference.mjs produces.
const std::vector<std::string>& reference_tokenizer_names();

// The text of a file; throws std::runtime_error if unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace hadron::test
