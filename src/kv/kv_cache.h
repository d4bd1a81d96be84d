// The paged KV pool: per attention layer, K and V caches of n_blocks blocks of block_size
// tokens, allocated on the backend's device.
#pragma once

#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "ops/backend.h"

namespace hadron {

struct KvLayerSpec {
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
};

class KvCache {
 public:
  KvCache() = default;
  // Allocates the pool; called once, after weights and activations took their memory.
  void allocate(Backend& backend, const std::vector<KvLayerSpec>& layers, int64_t n_blocks,
                int64_t block_size, DType dtype);

  // k_cache(l), v_cache(l): [n_blocks, block_size, n_kv_heads, head_dim]
  const Tensor& k_cache(int layer) const { return k_[layer]; }
  const Tensor& v_cache(int layer) const { return v_[layer]; }
  int64_t n_blocks() const { return n_blocks_; }
  int64_t block_size() const { return block_size_; }
  size_t bytes() const { return storage_.bytes(); }

  // Bytes one block takes over all layers, K and V.
  static size_t bytes_per_block(const std::vector<KvLayerSpec>& layers, int64_t block_size,
                                DType dtype);

 private:
  int64_t n_blocks_ = 0;
  int64_t block_size_ = 0;
  Buffer storage_;
  std::vector<Tensor> k_, v_;
};

}  // namespace hadron
