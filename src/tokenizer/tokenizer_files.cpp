// Tokenizer::load: tokenizer.json, or a folder with tokenizer.json, vocab.json + merges.txt or a
// tiktoken file.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "tokenizer/split_patterns.h"
#include "tokenizer/tiktoken.h"
#include "tokenizer/tokenizer.h"

namespace hadron {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tok::kQwen2Pattern;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error("cannot read tokenizer file {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json read_json(const fs::path& path) {
  try {
    return json::parse(read_text(path));
  } catch (const json::exception& e) {
    input_error("{}: malformed JSON: {}", path.string(), e.what());
  }
}

json merges_from_text(const fs::path& path) {
  std::istringstream in(read_text(path));
  json merges = json::array();
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (first && line.rfind("#version", 0) == 0)) continue;
    merges.push_back(line);
  }
  return merges;
}

// Added tokens from tokenizer_config.json's added_tokens_decoder ({"id": {content, ...}}).
json added_tokens_from_config(const fs::path& config_path) {
  json tokens = json::array();
  if (!fs::exists(config_path)) return tokens;
  const json config = read_json(config_path);
  if (!config.contains("added_tokens_decoder")) return tokens;
  for (const auto& [id, token] : config.at("added_tokens_decoder").items()) {
    json entry = token;
    entry["id"] = std::stoi(id);
    tokens.push_back(entry);
  }
  std::sort(tokens.begin(), tokens.end(),
            [](const json& a, const json& b) { return a.at("id") < b.at("id"); });
  return tokens;
}

// What transformers' Qwen2TokenizerFast builds from vocab.json + merges.txt: NFC, the Qwen2
// split, byte-level BPE and the ByteLevel decoder.
std::string vocab_merges_json(const fs::path& dir) {
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", false},
                           {"use_regex", false}};
  json root;
  root["normalizer"] = {{"type", "NFC"}};
  root["pre_tokenizer"] = {{"type", "Sequence"},
                           {"pretokenizers",
                            {{{"type", "Split"},
                              {"pattern", {{"Regex", kQwen2Pattern}}},
                              {"behavior", "Isolated"},
                              {"invert", false}},
                             byte_level}}};
  root["model"] = {{"type", "BPE"},
                   {"vocab", read_json(dir / "vocab.json")},
                   {"merges", merges_from_text(dir / "merges.txt")}};
  root["decoder"] = byte_level;
  root["added_tokens"] = added_tokens_from_config(dir / "tokenizer_config.json");
  return root.dump();
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& file_or_dir) {
  const fs::path path(file_or_dir);
  if (!fs::is_directory(path)) return from_json_text(read_text(path), path.string());
  if (fs::exists(path / "tokenizer.json")) {
    return from_json_text(read_text(path / "tokenizer.json"), (path / "tokenizer.json").string());
  }
  if (fs::exists(path / "vocab.json") && fs::exists(path / "merges.txt")) {
    return from_json_text(vocab_merges_json(path), (path / "vocab.json").string());
  }
  if (const std::optional<fs::path> file = tok::find_tiktoken_file(path)) {
    const json added = added_tokens_from_config(path / "tokenizer_config.json");
    return from_tiktoken(tok::read_tiktoken(*file, read_text(*file), added), file->string());
  }
  input_error(
      "{} has no tokenizer: neither tokenizer.json, vocab.json + merges.txt, tiktoken.model "
      "nor a *.tiktoken file",
      path.string());
}

bool Tokenizer::folder_has_tokenizer(const std::string& dir) {
  const fs::path path(dir);
  return fs::exists(path / "tokenizer.json") ||
         (fs::exists(path / "vocab.json") && fs::exists(path / "merges.txt")) ||
         (fs::is_directory(path) && tok::find_tiktoken_file(path));
}

}  // namespace hadron
