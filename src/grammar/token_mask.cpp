#include "grammar/token_mask.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "grammar/mask_worker.h"

namespace hadron::grammar {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes,
                                 std::vector<int32_t> eos_token_ids)
    : token_bytes_(std::move(token_bytes)), eos_token_ids_(std::move(eos_token_ids)) {
  std::vector<int32_t> order(token_bytes_.size());
  std::iota(order.begin(), order.end(), 0);
  std::erase_if(order, [&](int32_t t) { return token_bytes_[t].empty() || is_eos(t); });
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return token_bytes_[a] < token_bytes_[b] || (token_bytes_[a] == token_bytes_[b] && a < b);
  });
  nodes_.push_back({});
  std::vector<uint32_t> path = {0};  // path[d]: the node at depth d on the current branch
  for (int32_t token : order) {
    const std::string& bytes = token_bytes_[token];
    size_t common = 0;  // bytes shared with the current branch
    while (common + 1 < path.size() && common < bytes.size() &&
           nodes_[path[common + 1]].byte == static_cast<uint8_t>(bytes[common]))
      ++common;
    while (path.size() > common + 1) {
      nodes_[path.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t d = common; d < bytes.size(); ++d) {
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      const auto n_tokens = static_cast<uint32_t>(node_tokens_.size());
      nodes_.push_back(
          {static_cast<uint8_t>(bytes[d]), static_cast<uint32_t>(d + 1), 0, n_tokens, n_tokens});
    }
    node_tokens_.push_back(token);
    max_depth_ = std::max(max_depth_, static_cast<uint32_t>(bytes.size()));
    nodes_[path.back()].tokens_end = static_cast<uint32_t>(node_tokens_.size());
  }
  while (!path.empty()) {
    nodes_[path.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
    path.pop_back();
  }
}

bool TokenVocabulary::is_eos(int32_t token) const {
  return std::find(eos_token_ids_.begin(), eos_token_ids_.end(), token) != eos_token_ids_.end();
}

namespace {

// The view's Earley sets met during one trie walk: a set is named by its key
// (Matcher::newest_set_key), and the set a byte leads to is computed on the matcher once per
// (set, byte) and then read from the table. Inside a JSON string a few dozen sets recur for
// all 150k tokens.
class ViewDfa {
 public:
  static constexpr int32_t kUnknown = -1, kRefused = -2;
  int32_t intern(const Matcher& view, std::span<const int32_t> set_ids) {
    view.newest_set_key(set_ids, key_);
    auto [it, fresh] = ids_.try_emplace(key_, static_cast<int32_t>(escaped_.size()));
    if (fresh) {
      escaped_.push_back(view.escaped() ? 1 : 0);
      next_.resize(next_.size() + 256, kUnknown);
    }
    return it->second;
  }
  int32_t next(int32_t set, uint8_t byte) const { return next_[size_t{256} * set + byte]; }
  void set_next(int32_t set, uint8_t byte, int32_t to) { next_[size_t{256} * set + byte] = to; }
  bool escaped(int32_t set) const { return escaped_[set] != 0; }

 private:
  std::map<std::vector<uint64_t>, int32_t> ids_;
  std::vector<uint64_t> key_;
  std::vector<uint8_t> escaped_;
  std::vector<int32_t> next_;  // [set][byte]
};

}  // namespace

void TokenVocabulary::walk_view(Matcher& view, std::span<uint32_t> allowed,
                                std::vector<int32_t>& dependent) const {
  std::fill(allowed.begin(), allowed.end(), 0u);
  const size_t base = view.n_bytes();
  auto subtree_tokens = [&](uint32_t i) {
    const uint32_t end = nodes_[i].subtree_end;
    const size_t last = end < nodes_.size() ? nodes_[end].tokens_begin : node_tokens_.size();
    dependent.insert(dependent.end(), node_tokens_.begin() + nodes_[i].tokens_begin,
                     node_tokens_.begin() + static_cast<ptrdiff_t>(last));
  };
  ViewDfa dfa;
  // ids[base + d]: the set at depth d of the current trie branch, reached by path[0, d).
  std::vector<int32_t> ids(base + max_depth_ + 1, 0);
  ids[base] = dfa.intern(view, ids);
  std::vector<uint8_t> path(max_depth_), held;  // held: the bytes the view reads now
  // The set `byte` leads to from the branch's set at `depth`, on the view brought there.
  auto compute = [&](size_t depth, uint8_t byte) {
    size_t common = 0;
    while (common < held.size() && common < depth && held[common] == path[common]) ++common;
    view.rollback(view.n_bytes() - (base + common));
    held.resize(common);
    for (; common < depth; ++common) {
      view.advance(path[common]);  // accepted on this branch already
      held.push_back(path[common]);
    }
    if (!view.advance(byte)) return ViewDfa::kRefused;
    held.push_back(byte);
    return dfa.intern(view, std::span(ids).first(base + depth + 1));
  };
  for (uint32_t i = 1; i < nodes_.size();) {
    const Node& node = nodes_[i];
    const size_t depth = node.depth - 1;  // the parent's
    const int32_t from = ids[base + depth];
    int32_t to = dfa.next(from, node.byte);
    if (to == ViewDfa::kUnknown) {
      to = compute(depth, node.byte);
      dfa.set_next(from, node.byte, to);
    }
    if (to == ViewDfa::kRefused) {
      i = node.subtree_end;
      continue;
    }
    // Past a completion into the context the view no longer knows what follows.
    if (dfa.escaped(to)) {
      subtree_tokens(i);
      i = node.subtree_end;
      continue;
    }
    ids[base + depth + 1] = to;
    path[depth] = node.byte;
    for (uint32_t j = node.tokens_begin; j < node.tokens_end; ++j)
      allowed[node_tokens_[j] >> 5] |= 1u << (node_tokens_[j] & 31);
    ++i;
  }
  view.rollback(view.n_bytes() - base);
}

bool TokenVocabulary::accept(Matcher& matcher, int32_t token) const {
  if (token < 0 || token >= size()) return false;
  if (is_eos(token)) return matcher.can_end();
  const std::string& bytes = token_bytes_[token];
  return !bytes.empty() && matcher.advance(bytes);
}

}  // namespace hadron::grammar

namespace hadron::grammar {

std::shared_ptr<const TokenMasker::Position> TokenMasker::walk(Matcher view) const {
  auto computed = std::make_shared<Position>();
  computed->allowed.resize(mask_words(vocabulary_->size()));
  vocabulary_->walk_view(view, computed->allowed, computed->dependent);
  return computed;
}

void TokenMasker::store(std::vector<uint64_t> key, std::shared_ptr<const Position> computed) const {
  if (positions_.size() >= kMaxPositions) positions_.clear();
  positions_.emplace(std::move(key), std::move(computed));
}

std::shared_ptr<const TokenMasker::Position> TokenMasker::position(const Matcher& matcher) const {
  std::vector<uint64_t> key = matcher.signature();
  {
    std::unique_lock lock(mutex_);
    walked_.wait(lock, [&] { return !walking_.contains(key); });
    auto it = positions_.find(key);
    if (it != positions_.end()) return it->second;
  }
  std::shared_ptr<const Position> computed = walk(Matcher::view_of_newest_set(matcher));
  std::lock_guard lock(mutex_);
  store(std::move(key), computed);
  return computed;
}

void TokenMasker::prefetch(const Matcher& matcher) const {
  std::shared_ptr<const TokenMasker> self = weak_from_this().lock();
  if (!self) return;
  std::vector<uint64_t> key = matcher.signature();
  {
    std::lock_guard lock(mutex_);
    if (positions_.contains(key)) return;
  }
  // Only the newest set is copied; the task owns it and keeps the masker alive.
  auto view = std::make_shared<Matcher>(Matcher::view_of_newest_set(matcher));
  MaskWorker::shared().post([self, key = std::move(key), view]() mutable {
    {
      std::lock_guard lock(self->mutex_);
      // Known by now (the engine got there first), or already being walked.
      if (self->positions_.contains(key) || !self->walking_.insert(key).second) return;
    }
    std::shared_ptr<const Position> computed = self->walk(std::move(*view));
    {
      std::lock_guard lock(self->mutex_);
      self->walking_.erase(key);
      self->store(std::move(key), std::move(computed));
    }
    self->walked_.notify_all();
  });
}

void TokenMasker::fill_mask(Matcher& matcher, std::span<uint32_t> mask) const {
  const std::shared_ptr<const Position> pos = position(matcher);
  std::copy(pos->allowed.begin(), pos->allowed.end(), mask.begin());
  // Tokens that leave the current rules: tried on the full matcher, in byte order so that
  // consecutive tokens share the bytes of their common prefix.
  const size_t base = matcher.n_bytes();
  std::string_view previous;
  size_t held = 0;  // bytes of `previous` the matcher holds
  for (int32_t token : pos->dependent) {
    const std::string& bytes = vocabulary_->bytes(token);
    size_t common = 0;
    while (common < held && common < bytes.size() && bytes[common] == previous[common]) ++common;
    matcher.rollback(matcher.n_bytes() - (base + common));
    while (common < bytes.size() && matcher.advance(static_cast<uint8_t>(bytes[common]))) ++common;
    if (common == bytes.size()) mask[token >> 5] |= 1u << (token & 31);
    previous = bytes;
    held = common;
  }
  matcher.rollback(matcher.n_bytes() - base);
  if (matcher.can_end())
    for (int32_t t : vocabulary_->eos_token_ids())
      if (t >= 0 && t < vocabulary_->size()) mask[t >> 5] |= 1u << (t & 31);
}

}  // namespace hadron::grammar
