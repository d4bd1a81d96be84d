// tiktoken vocabularies (OpenAI's *.tiktoken files, Moonshot's tiktoken.model): one line per
// token, "<base64 of the token's bytes> <rank>". The rank is the token's id and its merge
// priority: byte-level BPE joins the adjacent pair whose concatenation has the lowest rank.
// The files hold neither the split regex nor the special tokens; the family gives the first,
// tokenizer_config.json the second.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"

namespace hadron::tok {

struct TiktokenVocab {
  std::vector<std::pair<std::string, int32_t>> ranks;  // token bytes, rank (= id)
  std::string pattern;                                 // split regex (tokenizer.json syntax)
  std::vector<AddedToken> added_tokens;                // ids set
};

// The lines of a tiktoken file. Throws InputError naming the line for bad base64, a missing or
// negative rank, or a token or rank given twice.
std::vector<std::pair<std::string, int32_t>> parse_tiktoken_ranks(std::string_view text);

// The tiktoken file of a model folder: tiktoken.model, else the only *.tiktoken file.
std::optional<std::filesystem::path> find_tiktoken_file(const std::filesystem::path& dir);

// The tiktoken file `file` (its contents `text`) with the split regex of its family (o200k_base
// and o200k_harmony, cl100k_base by file name; tiktoken.model is Moonshot's Kimi/Moonlight
// vocabulary) and the special tokens `added_tokens` (tokenizer.json's added_tokens format, ids
// set). Kimi's tokenizer also makes the 256 ids after the ranks special: those not in
// `added_tokens` are <|reserved_token_ID|>. Throws InputError naming the file for a file of no
// known family or a malformed one.
TiktokenVocab read_tiktoken(const std::filesystem::path& file, std::string_view text,
                            const nlohmann::json& added_tokens);

}  // namespace hadron::tok
