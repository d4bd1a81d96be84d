// tiktoken files and Tokenizer::from_tiktoken: the byte-level BPE tokenizer that transformers'
// TikTokenConverter builds from ranks (what gpt-oss's tokenizer.json is for o200k_harmony).
#include "tokenizer/tiktoken.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/split_patterns.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"

namespace hadron {
namespace tok {
namespace {

namespace fs = std::filesystem;

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  uint32_t bits = 0;
  int n_bits = 0;
  for (const char c : text) {
    const int value = base64_value(c);
    if (value < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      out.push_back(static_cast<char>((bits >> n_bits) & 0xff));
    }
  }
  return out;
}

constexpr int64_t kMaxRank = 1 << 24;  // as Model's largest id

struct TiktokenFamily {
  const char* file_name;
  const char* pattern;
  int32_t n_reserved_special;  // ids after the ranks that are special tokens
};

// The families whose split regex is known, by the name their files ship under.
constexpr TiktokenFamily kFamilies[] = {
    {"o200k_base.tiktoken", kO200kPattern, 0},
    {"o200k_harmony.tiktoken", kO200kPattern, 0},
    {"cl100k_base.tiktoken", kLlama3Pattern, 0},
    {"tiktoken.model", kKimiPattern, 256},
};

const TiktokenFamily& family_of(const fs::path& file) {
  const std::string name = file.filename().string();
  for (const TiktokenFamily& family : kFamilies) {
    if (name == family.file_name) return family;
  }
  std::string known;
  for (const TiktokenFamily& family : kFamilies) {
    known += known.empty() ? "" : ", ";
    known += family.file_name;
  }
  input_error("{}: tiktoken files hold no split regex and {} is not a known family (known: {})",
              file.string(), name, known);
}

// A token's bytes in the GPT-2 byte alphabet of byte-level vocabularies.
std::string to_byte_level(std::string_view bytes) {
  std::string chars;
  for (const char c : bytes) chars += byte_to_char(static_cast<unsigned char>(c));
  return chars;
}

// Every split of a token into two tokens is a merge (TikTokenConverter), ordered by the rank of
// the token they make, then by the ranks of the left and right parts. With these merges HF's
// BPE makes what tiktoken's lowest-rank-first joining makes.
std::vector<std::pair<std::string, std::string>> merges_from_ranks(const TiktokenVocab& vocab) {
  StringMap ranks;
  for (const auto& [bytes, rank] : vocab.ranks) ranks.put(bytes, rank);
  struct Merge {
    int32_t rank, left_rank, right_rank;
    size_t token_idx, split;
  };
  std::vector<Merge> merges;
  for (size_t idx = 0; idx < vocab.ranks.size(); ++idx) {
    const std::string_view bytes = vocab.ranks[idx].first;
    for (size_t split = 1; split < bytes.size(); ++split) {
      const std::optional<int32_t> left = ranks.find(bytes.substr(0, split));
      const std::optional<int32_t> right = ranks.find(bytes.substr(split));
      if (left && right) merges.push_back({vocab.ranks[idx].second, *left, *right, idx, split});
    }
  }
  std::sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) {
    return std::tie(a.rank, a.left_rank, a.right_rank) <
           std::tie(b.rank, b.left_rank, b.right_rank);
  });
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (const Merge& m : merges) {
    const std::string_view bytes = vocab.ranks[m.token_idx].first;
    out.emplace_back(to_byte_level(bytes.substr(0, m.split)), to_byte_level(bytes.substr(m.split)));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, int32_t>> parse_tiktoken_ranks(std::string_view text) {
  std::vector<std::pair<std::string, int32_t>> ranks;
  StringMap seen_tokens;
  std::vector<bool> seen_ranks;
  size_t line_idx = 0;
  for (size_t pos = 0; pos < text.size(); ++line_idx) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    const std::optional<std::string> bytes =
        space == std::string_view::npos ? std::nullopt : base64_decode(line.substr(0, space));
    if (!bytes || bytes->empty()) {
      input_error("line {}: \"{}\" is not \"<base64 token> <rank>\"", line_idx + 1, line);
    }
    int64_t rank = 0;
    const std::string_view digits = line.substr(space + 1);
    for (const char c : digits) {
      if (c < '0' || c > '9' || (rank = rank * 10 + (c - '0')) > kMaxRank)
        input_error("line {}: rank \"{}\" is not a token id (0 to {})", line_idx + 1, digits,
                    kMaxRank);
    }
    if (digits.empty()) input_error("line {}: no rank", line_idx + 1);
    if (!seen_tokens.insert(*bytes, static_cast<int32_t>(rank)))
      input_error("line {}: token {} is listed twice", line_idx + 1, line.substr(0, space));
    if (seen_ranks.size() <= static_cast<size_t>(rank)) seen_ranks.resize(rank + 1);
    if (seen_ranks[rank]) input_error("line {}: rank {} is listed twice", line_idx + 1, rank);
    seen_ranks[rank] = true;
    ranks.emplace_back(*bytes, static_cast<int32_t>(rank));
  }
  if (ranks.empty()) input_error("no tokens");
  return ranks;
}

std::optional<fs::path> find_tiktoken_file(const fs::path& dir) {
  if (fs::exists(dir / "tiktoken.model")) return dir / "tiktoken.model";
  std::optional<fs::path> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".tiktoken") continue;
    if (found) {
      input_error("{} has two tiktoken files ({} and {})", dir.string(), found->string(),
                  entry.path().string());
    }
    found = entry.path();
  }
  return found;
}

TiktokenVocab read_tiktoken(const fs::path& file, std::string_view text,
                            const nlohmann::json& added_tokens) {
  const TiktokenFamily& family = family_of(file);
  TiktokenVocab vocab;
  try {
    vocab.ranks = parse_tiktoken_ranks(text);
  } catch (const InputError& e) {
    input_error("{}: {}", file.string(), e.what());
  }
  vocab.pattern = family.pattern;
  vocab.added_tokens = added_tokens_from_json(added_tokens);
  int32_t n_ranks = 0;  // one past the largest (the count, in a file without gaps)
  for (const auto& [bytes, rank] : vocab.ranks) n_ranks = std::max(n_ranks, rank + 1);
  for (int32_t id = n_ranks; id < n_ranks + family.n_reserved_special; ++id) {
    const bool named = std::any_of(vocab.added_tokens.begin(), vocab.added_tokens.end(),
                                   [&](const AddedToken& token) { return token.id == id; });
    if (!named) {
      vocab.added_tokens.push_back(
          {fmt::format("<|reserved_token_{}|>", id), id, /*special=*/true});
    }
  }
  return vocab;
}

}  // namespace tok

Tokenizer Tokenizer::from_tiktoken(const tok::TiktokenVocab& vocab, const std::string& origin) {
  try {
    auto state = std::make_shared<tok::TokenizerState>();
    state->pre_tokenizer = tok::PreTokenizer::from_json(
        {{"type", "Sequence"},
         {"pretokenizers",
          {{{"type", "Split"},
            {"pattern", {{"Regex", vocab.pattern}}},
            {"behavior", "Isolated"},
            {"invert", false}},
           {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}});
    std::vector<std::pair<std::string, int32_t>> model_vocab;
    model_vocab.reserve(vocab.ranks.size());
    for (const auto& [bytes, rank] : vocab.ranks)
      model_vocab.emplace_back(tok::to_byte_level(bytes), rank);
    tok::BpeOptions options;
    options.byte_level = true;
    options.ignore_merges = true;  // tiktoken takes a piece that is a token as it is
    state->model =
        std::make_unique<tok::BpeModel>(model_vocab, tok::merges_from_ranks(vocab), options);
    state->decoder = tok::Decoder::from_json({{"type", "ByteLevel"}});
    state->finalize(vocab.added_tokens);
    return Tokenizer(std::move(state));
  } catch (const InputError& e) {
    input_error("{}: {}", origin, e.what());
  }
}

}  // namespace hadron
