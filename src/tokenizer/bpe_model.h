// The BPE model of Hugging Face tokenizers: ranked merges applied to one pre-tokenized word,
// with byte fallback, unknown-token fusing, ignore_merges and a per-word cache.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/flat_map.h"
#include "tokenizer/model.h"

namespace hadron::tok {

struct BpeOptions {
  // Words are raw bytes and the vocabulary is in the GPT-2 byte alphabet (a ByteLevel
  // pre-tokenizer ran). Otherwise words are UTF-8 and symbols are characters.
  bool byte_level = false;
  bool ignore_merges = false;
  bool byte_fallback = false;
  bool fuse_unk = false;
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class BpeModel final : public Model {
 public:
  // vocab: token -> id; merges: (left, right) pairs, highest priority first.
  // Throws InputError when a merge names a token that is not in the vocabulary.
  BpeModel(const std::vector<std::pair<std::string, int32_t>>& vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options);

  // Appends the ids of one pre-tokenized word (in the model's alphabet, see BpeOptions).
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  void initial_symbols(std::string_view word, std::vector<Symbol>& symbols) const;
  void add_char_symbol(std::string_view ch, bool first, bool last, std::vector<Symbol>& symbols,
                       std::optional<std::pair<int32_t, size_t>>& unk) const;
  void merge(std::vector<Symbol>& symbols) const;
  const uint64_t* find_merge(int32_t left, int32_t right) const {
    return merges_.find((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
                        static_cast<uint32_t>(right));
  }

  BpeOptions options_;
  StringMap word_vocab_;   // token in the words' alphabet (raw bytes when byte-level) -> id
  PairMap merges_;         // (left id, right id) -> rank << 32 | merged id
  int32_t byte_ids_[256];  // byte-level: id of each byte's character, -1 when absent
  std::optional<int32_t> unk_id_;

  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kMaxCachedWordBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace hadron::tok
