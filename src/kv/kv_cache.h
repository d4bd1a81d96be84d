// The paged KV pool: per attention layer, K and V caches of n_blocks blocks of block_size
// tokens, allocated on the backend's device. A multi-head latent attention (MLA) layer keeps
// one cache: per token the compressed latent and the rope key, no V. A sparse-attention layer
// (DeepSeek-V3.2, GLM-5) also keeps its lightning indexer's key per token, in the same blocks,
// so prefix caching, chunked prefill and preemption treat it like the latent.
//
// FP8 pool (--kv-cache-dtype fp8, dtype F8_E4M3): the same shapes, one e4m3 code per value at a
// per-tensor scale of 1 (value = code, as vLLM's uncalibrated k_scale = v_scale = 1.0), so a
// kernel reads a token's head as head_dim bytes and widens them; no scale tensor to look up.
// Values past +-448 saturate; below 2^-6 they lose precision (e4m3 subnormals). Full-attention
// layers only (MLA latents stay in the activation dtype).
#pragma once

#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "ops/backend.h"

namespace hadron {

struct KvLayerSpec {
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  // MLA: k_cache holds per token [latent | rope key] (one head of head_dim = latent_dim +
  // rope_dim values, as made by latent()); there is no v_cache.
  int64_t latent_dim = 0;
  // Sparse attention: index_cache holds per token the indexer key of index_dim values.
  int64_t index_dim = 0;

  static KvLayerSpec latent(int64_t latent_dim, int64_t rope_dim, int64_t index_dim = 0) {
    return {1, latent_dim + rope_dim, latent_dim, index_dim};
  }
  bool is_latent() const { return latent_dim > 0; }
  bool has_index() const { return index_dim > 0; }
  // Values one token keeps in this layer's caches.
  int64_t values_per_token() const {
    return (is_latent() ? 1 : 2) * n_kv_heads * head_dim + index_dim;
  }
};

// The per-sequence state of one linear-attention (gated DeltaNet) layer.
struct LinearStateSpec {
  int64_t conv_dim = 0;    // channels of the causal convolution
  int64_t conv_width = 0;  // inputs it remembers: kernel - 1
  int64_t n_heads = 0;     // value heads
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  DType state_dtype = DType::F32;  // the recurrent state's
};

class KvCache {
 public:
  KvCache() = default;
  // Allocates the pool; called once, after weights and activations took their memory.
  void allocate(Backend& backend, const std::vector<KvLayerSpec>& layers, int64_t n_blocks,
                int64_t block_size, DType dtype);

  // k_cache(l), v_cache(l): [n_blocks, block_size, n_kv_heads, head_dim]; for a latent
  // layer k_cache(l) is [n_blocks, block_size, 1, latent_dim + rope_dim] and v_cache(l) undefined.
  const Tensor& k_cache(int layer) const { return k_[layer]; }
  const Tensor& v_cache(int layer) const { return v_[layer]; }
  // index_cache(l): [n_blocks, block_size, index_dim] for a layer with has_index(), else
  // undefined.
  const Tensor& index_cache(int layer) const { return index_[layer]; }
  // One block's contiguous pieces over all layers (K and V, or the latent, then indexer keys),
  // in a fixed order, bytes_per_block in all: what the offload tiers copy out and back.
  std::vector<Tensor> block_parts(int32_t block) const;
  int64_t n_blocks() const { return n_blocks_; }
  int64_t block_size() const { return block_size_; }
  size_t bytes() const { return storage_.bytes(); }

  // Bytes one block takes over all layers, K and V (or latent, and indexer keys).
  static size_t bytes_per_block(const std::vector<KvLayerSpec>& layers, int64_t block_size,
                                DType dtype);

  // Allocates n_slots state slots for the linear-attention layers (once, before the KV pool:
  // both come out of the same memory budget). conv_dtype: the activations'.
  void allocate_states(Backend& backend, const std::vector<LinearStateSpec>& layers,
                       int64_t n_slots, DType conv_dtype);
  // conv_state(l): [n_slots, conv_dim, conv_width]; recurrent_state(l): [n_slots, n_heads,
  // key_head_dim, value_head_dim], for the l-th linear-attention layer.
  const Tensor& conv_state(int layer) const { return conv_[layer]; }
  const Tensor& recurrent_state(int layer) const { return recurrent_[layer]; }
  int64_t n_state_slots() const { return n_state_slots_; }
  // Copies every layer's state in slot src to slot dst (a sequence forked from another).
  void copy_state(Backend& backend, int32_t src, int32_t dst) const;
  size_t state_bytes() const { return state_storage_.bytes(); }
  // Bytes of one sequence's state over all linear-attention layers.
  static size_t state_bytes_per_seq(const std::vector<LinearStateSpec>& layers, DType conv_dtype);

 private:
  int64_t n_blocks_ = 0;
  int64_t block_size_ = 0;
  Buffer storage_;
  std::vector<Tensor> k_, v_, index_;
  int64_t n_state_slots_ = 0;
  Buffer state_storage_;
  std::vector<Tensor> conv_, recurrent_;
};

}  // namespace hadron
