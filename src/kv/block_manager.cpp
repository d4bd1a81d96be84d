#include "kv/block_manager.h"

#include <algorithm>

#include "core/error.h"

namespace hadron {

BlockManager::BlockManager(int64_t n_blocks, int64_t block_size, bool enable_prefix_caching)
    : block_size_(block_size), prefix_caching_(enable_prefix_caching), blocks_(n_blocks) {
  HADRON_CHECK(n_blocks > 0 && block_size > 0, "{} blocks of {} tokens", n_blocks, block_size);
  for (int32_t i = 0; i < n_blocks; ++i)
    blocks_[i].free_position = free_list_.insert(free_list_.end(), i);
}

uint64_t BlockManager::block_hash(uint64_t parent, std::span<const int32_t> tokens,
                                  uint64_t salt) const {
  // FNV-1a over the parent hash, the salt and the tokens, then a final avalanche.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t value) {
    for (int byte = 0; byte < 8; ++byte)
      h = (h ^ ((value >> (8 * byte)) & 0xff)) * 0x100000001b3ull;
  };
  mix(parent);
  mix(salt);
  for (int32_t token : tokens) mix(static_cast<uint32_t>(token));
  h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33;
  return h;
}

void BlockManager::take(int32_t block) {
  Block& b = blocks_[block];
  if (b.ref_count++ == 0) free_list_.erase(b.free_position);
}

void BlockManager::uncache(int32_t block) {
  Block& b = blocks_[block];
  if (!b.cached) return;
  auto it = cache_.find(b.hash);
  if (it != cache_.end() && it->second == block) cache_.erase(it);
  b.cached = false;
  b.tokens.clear();
}

PrefixMatch BlockManager::acquire_prefix(std::span<const int32_t> tokens, uint64_t salt,
                                         int64_t max_tokens) {
  PrefixMatch match;
  const int64_t n_full = std::min<int64_t>(tokens.size(), max_tokens) / block_size_;
  stats_.queried_tokens += static_cast<int64_t>(tokens.size());
  if (!prefix_caching_) return match;
  uint64_t parent = 0;
  for (int64_t i = 0; i < n_full; ++i) {
    const auto block_tokens = tokens.subspan(i * block_size_, block_size_);
    parent = block_hash(parent, block_tokens, salt);
    const auto it = cache_.find(parent);
    if (it == cache_.end()) break;
    const Block& b = blocks_[it->second];
    if (!std::equal(b.tokens.begin(), b.tokens.end(), block_tokens.begin(), block_tokens.end()))
      break;
    match.blocks.push_back(it->second);
    match.hashes.push_back(parent);
    match.cursor = {i + 1, parent};
  }
  for (int32_t block : match.blocks) take(block);
  match.n_tokens = static_cast<int64_t>(match.blocks.size()) * block_size_;
  stats_.hit_tokens += match.n_tokens;
  return match;
}

void BlockManager::trim_prefix(PrefixMatch& match, int64_t n_blocks) {
  const auto n_matched = static_cast<int64_t>(match.blocks.size());
  if (n_blocks >= n_matched) return;
  release(std::span(match.blocks).subspan(n_blocks));
  match.blocks.resize(n_blocks);
  match.hashes.resize(n_blocks);
  match.cursor = n_blocks > 0 ? BlockHashCursor{n_blocks, match.hashes.back()} : BlockHashCursor{};
  stats_.hit_tokens -= (n_matched - n_blocks) * block_size_;
  match.n_tokens = n_blocks * block_size_;
}

std::optional<std::vector<int32_t>> BlockManager::allocate(int64_t n) {
  if (n > n_free()) return std::nullopt;
  std::vector<int32_t> result;
  result.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t block = free_list_.front();
    uncache(block);
    take(block);
    result.push_back(block);
  }
  return result;
}

void BlockManager::share(std::span<const int32_t> blocks) {
  for (int32_t block : blocks) {
    HADRON_CHECK(blocks_[block].ref_count > 0, "sharing unowned block {}", block);
    take(block);
  }
}

void BlockManager::release(std::span<const int32_t> blocks) {
  // Release tail blocks first so a sequence's last blocks are evicted before its first ones,
  // which other sequences are likelier to share.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    Block& b = blocks_[*it];
    HADRON_CHECK(b.ref_count > 0, "block {} released more often than taken", *it);
    if (--b.ref_count == 0) b.free_position = free_list_.insert(free_list_.end(), *it);
  }
}

void BlockManager::cache_full_blocks(std::span<const int32_t> blocks,
                                     std::span<const int32_t> tokens, uint64_t salt,
                                     BlockHashCursor& cursor) {
  if (!prefix_caching_) return;
  const int64_t n_full = std::min<int64_t>(tokens.size() / block_size_, blocks.size());
  for (int64_t i = cursor.n_hashed; i < n_full; ++i) {
    const auto block_tokens = tokens.subspan(i * block_size_, block_size_);
    cursor.parent = block_hash(cursor.parent, block_tokens, salt);
    cursor.n_hashed = i + 1;
    Block& b = blocks_[blocks[i]];
    if (b.cached || cache_.contains(cursor.parent)) continue;  // already, or an identical one
    b.cached = true;
    b.hash = cursor.parent;
    b.tokens.assign(block_tokens.begin(), block_tokens.end());
    cache_[cursor.parent] = blocks[i];
  }
}

}  // namespace hadron
