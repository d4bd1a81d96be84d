#include "kv/kv_cache.h"

#include "core/error.h"

namespace hadron {

size_t KvCache::bytes_per_block(const std::vector<KvLayerSpec>& layers, int64_t block_size,
                                DType dtype) {
  size_t bytes = 0;
  for (const KvLayerSpec& layer : layers)
    bytes += block_size * layer.values_per_token() * dtype_size(dtype);
  return bytes;
}

void KvCache::allocate(Backend& backend, const std::vector<KvLayerSpec>& layers, int64_t n_blocks,
                       int64_t block_size, DType dtype) {
  HADRON_CHECK(n_blocks > 0 && block_size > 0 && storage_.bytes() == 0,
               "KV cache of {} blocks of {} (allocated once)", n_blocks, block_size);
  n_blocks_ = n_blocks;
  block_size_ = block_size;
  storage_ = backend.allocate(bytes_per_block(layers, block_size, dtype) * n_blocks);
  char* cursor = static_cast<char*>(storage_.data());
  for (const KvLayerSpec& layer : layers) {
    for (auto* list : {&k_, &v_}) {
      if (list == &v_ && layer.is_latent()) {
        list->emplace_back();
        continue;
      }
      Tensor t =
          Tensor::view_of(cursor, dtype, {n_blocks, block_size, layer.n_kv_heads, layer.head_dim},
                          backend.device());
      cursor += t.nbytes();
      list->push_back(t);
    }
    index_.emplace_back();
    if (!layer.has_index()) continue;
    index_.back() =
        Tensor::view_of(cursor, dtype, {n_blocks, block_size, layer.index_dim}, backend.device());
    cursor += index_.back().nbytes();
  }
}

}  // namespace hadron
