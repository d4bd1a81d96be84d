// Per-tokenizer token trie and the vocabulary mask of a Matcher's state. The trie is walked
// depth first and a refused byte skips the whole subtree: tokens sharing a prefix share its
// work. The walk determinizes the matcher on the fly (each Earley set met is named by its
// key, and the set a byte leads to is computed once per walk), so most trie nodes cost one
// table read instead of an Earley step. The walk runs on a view of the
// matcher's newest set (Matcher::view_of_newest_set) and is cached by the view's signature:
// tokens whose bytes stay inside the current rules (most of them inside a JSON string) are
// decided once per grammar position; only those that complete into the context are checked
// against the full matcher on each mask.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "grammar/matcher.h"

namespace hadron::grammar {

class TokenVocabulary {
 public:
  // token_bytes[id]: the bytes the token stands for; empty for tokens a grammar never allows
  // (special tokens). End-of-sequence tokens are allowed exactly when the grammar can end.
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> eos_token_ids);

  int32_t size() const { return static_cast<int32_t>(token_bytes_.size()); }
  const std::string& bytes(int32_t token) const { return token_bytes_.at(token); }
  bool is_eos(int32_t token) const;
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }

  // On a view: sets bit t of `allowed` for tokens the view decides, and lists (in byte
  // order) the tokens whose bytes complete into the view's context.
  void walk_view(Matcher& view, std::span<uint32_t> allowed, std::vector<int32_t>& dependent) const;
  // Reads `token`; false (and no change) when the grammar refuses it. EOS is accepted (with no
  // byte read) when the grammar can end.
  bool accept(Matcher& matcher, int32_t token) const;

 private:
  struct Node {  // in depth-first order; nodes_[0] is the root
    uint8_t byte = 0;
    uint32_t depth = 0;
    uint32_t subtree_end = 0;  // one past the node's last descendant
    uint32_t tokens_begin = 0, tokens_end = 0;
  };
  std::vector<std::string> token_bytes_;
  std::vector<int32_t> eos_token_ids_;
  std::vector<Node> nodes_;
  std::vector<int32_t> node_tokens_;
  uint32_t max_depth_ = 0;  // the longest token's bytes
};

// A grammar's masks over one vocabulary, with the per-position cache; shared by requests.
class TokenMasker : public std::enable_shared_from_this<TokenMasker> {
 public:
  TokenMasker(std::shared_ptr<const Grammar> grammar,
              std::shared_ptr<const TokenVocabulary> vocabulary)
      : grammar_(std::move(grammar)), vocabulary_(std::move(vocabulary)) {}

  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  // Sets bit t of `mask` ([mask_words(size)] words) exactly when token t may come next.
  void fill_mask(Matcher& matcher, std::span<uint32_t> mask) const;
  // Computes the first position's mask now (the cache's caller pays, not the engine step).
  void warm_start() const { position(Matcher(grammar_)); }
  // Starts computing the mask of `matcher`'s position on the shared MaskWorker, unless it is
  // known or under way; fill_mask then waits for a walk under way instead of repeating it.
  // Does nothing for a masker not owned by a shared_ptr.
  void prefetch(const Matcher& matcher) const;

 private:
  struct Position {
    std::vector<uint32_t> allowed;
    std::vector<int32_t> dependent;
  };
  std::shared_ptr<const Position> position(const Matcher& matcher) const;
  std::shared_ptr<const Position> walk(Matcher view) const;
  // With mutex_ held.
  void store(std::vector<uint64_t> key, std::shared_ptr<const Position> computed) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  static constexpr size_t kMaxPositions = 256;  // each holds a vocabulary bitmask
  mutable std::mutex mutex_;
  mutable std::map<std::vector<uint64_t>, std::shared_ptr<const Position>> positions_;
  mutable std::set<std::vector<uint64_t>> walking_;  // keys the worker is computing now
  mutable std::condition_variable walked_;
};

inline size_t mask_words(int32_t vocab_size) { return (static_cast<size_t>(vocab_size) + 31) / 32; }
inline bool mask_allows(std::span<const uint32_t> mask, int32_t token) {
  return (mask[token >> 5] >> (token & 31)) & 1u;
}

}  // namespace hadron::grammar
