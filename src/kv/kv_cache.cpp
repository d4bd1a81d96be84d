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

std::vector<Tensor> KvCache::block_parts(int32_t block) const {
  HADRON_CHECK(block >= 0 && block < n_blocks_, "block {} of {}", block, n_blocks_);
  std::vector<Tensor> parts;
  for (size_t layer = 0; layer < k_.size(); ++layer)
    for (const Tensor* pool : {&k_[layer], &v_[layer], &index_[layer]})
      if (pool->defined()) parts.push_back(pool->slice_rows(block, block + 1));
  return parts;
}

size_t KvCache::state_bytes_per_seq(const std::vector<LinearStateSpec>& layers, DType conv_dtype) {
  size_t bytes = 0;
  for (const LinearStateSpec& layer : layers)
    bytes +=
        layer.conv_dim * layer.conv_width * dtype_size(conv_dtype) +
        layer.n_heads * layer.key_head_dim * layer.value_head_dim * dtype_size(layer.state_dtype);
  return bytes;
}

void KvCache::copy_state(Backend& backend, int32_t src, int32_t dst) const {
  HADRON_CHECK(src >= 0 && src < n_state_slots_ && dst >= 0 && dst < n_state_slots_ && src != dst,
               "state slot {} copied to {} of {}", src, dst, n_state_slots_);
  for (const auto* states : {&conv_, &recurrent_})
    for (const Tensor& state : *states)
      backend.copy(state.slice_rows(src, src + 1), state.slice_rows(dst, dst + 1));
}

void KvCache::allocate_states(Backend& backend, const std::vector<LinearStateSpec>& layers,
                              int64_t n_slots, DType conv_dtype) {
  HADRON_CHECK(n_slots > 0 && state_storage_.bytes() == 0, "{} state slots (allocated once)",
               n_slots);
  n_state_slots_ = n_slots;
  state_storage_ = backend.allocate(state_bytes_per_seq(layers, conv_dtype) * n_slots);
  char* cursor = static_cast<char*>(state_storage_.data());
  for (const LinearStateSpec& layer : layers) {
    conv_.push_back(Tensor::view_of(cursor, conv_dtype, {n_slots, layer.conv_dim, layer.conv_width},
                                    backend.device()));
    cursor += conv_.back().nbytes();
    recurrent_.push_back(Tensor::view_of(
        cursor, layer.state_dtype,
        {n_slots, layer.n_heads, layer.key_head_dim, layer.value_head_dim}, backend.device()));
    cursor += recurrent_.back().nbytes();
  }
}

}  // namespace hadron
