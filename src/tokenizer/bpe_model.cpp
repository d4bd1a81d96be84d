#include "tokenizer/bpe_model.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/byte_level.h"

namespace hadron::tok {
namespace {

constexpr int32_t kRemoved = -1;

struct MergeCandidate {
  uint32_t rank;
  int32_t pos;
  int32_t new_id;
  // std heap functions build a max-heap: the lowest rank, then the leftmost, must be "largest".
  bool operator<(const MergeCandidate& other) const {
    if (rank != other.rank) return rank > other.rank;
    return pos > other.pos;
  }
};

}  // namespace

BpeModel::BpeModel(const std::vector<std::pair<std::string, int32_t>>& vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : Model(vocab), options_(std::move(options)), merges_(merges.size()) {
  if (options_.byte_level &&
      !(options_.continuing_subword_prefix.empty() && options_.end_of_word_suffix.empty())) {
    input_error(
        "tokenizer: BPE continuing_subword_prefix/end_of_word_suffix with a ByteLevel "
        "pre-tokenizer is not supported");
  }
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  for (const auto& [token, id] : vocab) {
    if (!options_.byte_level) {
      word_vocab_.put(token, id);
      continue;
    }
    if (const std::optional<std::string> bytes = byte_level_to_bytes(token)) {
      word_vocab_.put(*bytes, id);
      if (bytes->size() == 1) byte_ids_[static_cast<unsigned char>((*bytes)[0])] = id;
    }
  }
  const size_t prefix_len = options_.continuing_subword_prefix.size();
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const std::optional<int32_t> left_id = vocab_.find(left);
    const std::optional<int32_t> right_id = vocab_.find(right);
    if (!left_id || !right_id) {
      input_error("tokenizer: merge {} \"{} {}\" names a token missing from the vocabulary", rank,
                  left, right);
    }
    const std::string merged = left + right.substr(std::min(prefix_len, right.size()));
    const std::optional<int32_t> merged_id = vocab_.find(merged);
    if (!merged_id) {
      input_error("tokenizer: merge {} \"{} {}\" makes \"{}\", which is not in the vocabulary",
                  rank, left, right, merged);
    }
    merges_.put((static_cast<uint64_t>(*left_id) << 32) | static_cast<uint32_t>(*right_id),
                (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(*merged_id));
  }
  if (options_.unk_token) unk_id_ = vocab_.find(*options_.unk_token);
}

// One character of a word (HF BPE::merge_word): its token, else its bytes' <0xXX> tokens,
// else the unknown token (fused with a preceding one when fuse_unk), else nothing.
void BpeModel::add_char_symbol(std::string_view ch, bool first, bool last,
                               std::vector<Symbol>& symbols,
                               std::optional<std::pair<int32_t, size_t>>& unk) const {
  const auto push = [&](int32_t id) {
    symbols.push_back(
        {id, static_cast<int32_t>(symbols.size()) - 1, static_cast<int32_t>(symbols.size()) + 1});
  };
  std::string key;
  if (!first) key += options_.continuing_subword_prefix;
  key += ch;
  if (last) key += options_.end_of_word_suffix;
  if (const std::optional<int32_t> id = word_vocab_.find(key)) {
    if (unk) push(unk->first);
    unk.reset();
    push(*id);
    return;
  }
  if (options_.byte_fallback) {
    std::vector<int32_t> byte_ids;
    for (const char c : key) {
      const std::optional<int32_t> id =
          vocab_.find(fmt::format("<0x{:02X}>", static_cast<unsigned char>(c)));
      if (!id) break;
      byte_ids.push_back(*id);
    }
    if (byte_ids.size() == key.size()) {
      for (const int32_t id : byte_ids) push(id);
      return;
    }
  }
  if (!options_.unk_token) return;
  if (!unk_id_)
    input_error("tokenizer: unk_token \"{}\" is not in the vocabulary", *options_.unk_token);
  if (unk && !options_.fuse_unk) push(unk->first);
  if (!unk || !options_.fuse_unk) unk = std::make_pair(*unk_id_, ch.size());
}

void BpeModel::initial_symbols(std::string_view word, std::vector<Symbol>& symbols) const {
  symbols.clear();
  if (options_.byte_level) {
    bool all_known = true;
    for (size_t i = 0; i < word.size(); ++i) {
      const int32_t id = byte_ids_[static_cast<unsigned char>(word[i])];
      all_known &= id >= 0;
      symbols.push_back({id, static_cast<int32_t>(i) - 1, static_cast<int32_t>(i) + 1});
    }
    if (all_known) return;
    symbols.clear();
  }
  std::optional<std::pair<int32_t, size_t>> unk;
  for (size_t pos = 0; pos < word.size();) {
    const size_t n = options_.byte_level ? 1 : std::min(utf8_len(word[pos]), word.size() - pos);
    add_char_symbol(word.substr(pos, n), pos == 0, pos + n == word.size(), symbols, unk);
    pos += n;
  }
  if (unk) {
    symbols.push_back({unk->first, static_cast<int32_t>(symbols.size()) - 1,
                       static_cast<int32_t>(symbols.size()) + 1});
  }
}

// Word::merge_all of HF tokenizers: repeatedly merge the lowest-ranked adjacent pair, leftmost
// first, through a heap of candidates that are re-checked when popped.
void BpeModel::merge(std::vector<Symbol>& symbols) const {
  thread_local std::vector<MergeCandidate> heap;
  heap.clear();
  const auto n = static_cast<int32_t>(symbols.size());
  const auto consider = [&](int32_t pos, int32_t right_pos) {
    if (const uint64_t* m = find_merge(symbols[pos].id, symbols[right_pos].id)) {
      heap.push_back(
          {static_cast<uint32_t>(*m >> 32), pos, static_cast<int32_t>(*m & 0xffffffffu)});
      std::push_heap(heap.begin(), heap.end());
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i, i + 1);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const MergeCandidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.pos];
    if (left.id == kRemoved || left.next >= n) continue;
    Symbol& right = symbols[left.next];
    const uint64_t* m = find_merge(left.id, right.id);
    if (m == nullptr || static_cast<int32_t>(*m & 0xffffffffu) != top.new_id) continue;
    left.id = top.new_id;
    right.id = kRemoved;
    left.next = right.next;
    if (left.next < n) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev, top.pos);
    if (left.next < n) consider(top.pos, left.next);
  }
}

void BpeModel::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (const std::optional<int32_t> id = word_vocab_.find(word)) {
      out.push_back(*id);
      return;
    }
  }
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (const auto it = cache_.find(std::string(word)); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  thread_local std::vector<Symbol> symbols;
  initial_symbols(word, symbols);
  merge(symbols);
  const size_t first = out.size();
  for (const Symbol& s : symbols) {
    if (s.id != kRemoved) out.push_back(s.id);
  }
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity)
      cache_.emplace(word, std::vector<int32_t>(out.begin() + first, out.end()));
  }
}

}  // namespace hadron::tok
