// CudaBackend's attention-side ops: the fused qkv -> q/k norm -> RoPE -> paged-cache step and
// attention over the paged cache (the split-KV decode kernel for sequences of one query, the
// tiled prefill kernel for the rest), with sliding windows and per-head sink logits.
#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/kernels.h"

namespace hadron::cuda {

int attention_tile_dim(int64_t head_dim) {
  HADRON_CHECK(head_dim >= 32 && head_dim <= 256 && head_dim % 16 == 0,
               "attention head_dim {}: the CUDA kernels run 32..256 in steps of 16", head_dim);
  return head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 256;
}

void CudaBackend::check_attention(int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) const {
  if (head_dim < 32 || head_dim > 256 || head_dim % 16 != 0)
    input_error(
        "the CUDA backend cannot run attention heads of head_dim {} (supported: 32 to 256 in "
        "steps of 16); run this model with --device cpu",
        head_dim);
  if (n_kv_heads <= 0 || n_heads % n_kv_heads != 0 || n_heads / n_kv_heads > kMaxAttentionGroup)
    input_error(
        "the CUDA backend cannot run {} query heads over {} KV heads (each KV head may serve at "
        "most {} query heads); run this model with --device cpu",
        n_heads, n_kv_heads, kMaxAttentionGroup);
}

QkvRopeStoreArgs checked_qkv_rope_args(const Tensor& qkv, const Tensor& q_norm,
                                       const Tensor& k_norm, const Tensor& positions,
                                       const Tensor& cos_sin, const QkvParams& params,
                                       const Tensor& k_cache, const Tensor& v_cache,
                                       const Tensor& slot_mapping, const Tensor& q_out) {
  check_tensor(qkv, DType::BF16, "qkv");
  check_tensor(q_out, DType::BF16, "q_out");
  check_tensor(k_cache, DType::BF16, "k_cache");
  check_tensor(v_cache, DType::BF16, "v_cache");
  check_tensor(positions, DType::I32, "positions");
  check_tensor(slot_mapping, DType::I32, "slot_mapping");
  check_tensor(cos_sin, DType::F32, "cos_sin");
  if (q_norm.defined()) check_tensor(q_norm, DType::BF16, "q_norm");
  if (k_norm.defined()) check_tensor(k_norm, DType::BF16, "k_norm");
  const int64_t n_tokens = qkv.size(0), d = params.head_dim;
  const int64_t nq = params.n_heads, nkv = params.n_kv_heads;
  const int64_t rotary_dim = cos_sin.size(1);
  HADRON_CHECK(qkv.size(-1) == (nq + 2 * nkv) * d && q_out.numel() == n_tokens * nq * d &&
                   k_cache.ndim == 4 && k_cache.size(2) == nkv && k_cache.size(3) == d &&
                   v_cache.numel() == k_cache.numel() && rotary_dim <= d && rotary_dim % 2 == 0 &&
                   positions.numel() == n_tokens && slot_mapping.numel() == n_tokens &&
                   (!q_norm.defined() || q_norm.numel() == d) &&
                   (!k_norm.defined() || k_norm.numel() == d),
               "qkv_rope_store {} (heads {}/{} x {}) into q {} and cache {}", qkv.describe(), nq,
               nkv, d, q_out.describe(), k_cache.describe());
  return {qkv.data,
          q_norm.defined() ? q_norm.data : nullptr,
          k_norm.defined() ? k_norm.data : nullptr,
          positions.ptr<int32_t>(),
          cos_sin.ptr<float>(),
          slot_mapping.ptr<int32_t>(),
          k_cache.data,
          v_cache.data,
          q_out.data,
          n_tokens,
          nq,
          nkv,
          d,
          rotary_dim,
          params.norm_eps,
          params.style == RopeStyle::kNeox};
}

void CudaBackend::qkv_rope_store(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                                 const Tensor& positions, const Tensor& cos_sin,
                                 const QkvParams& params, const Tensor& k_cache,
                                 const Tensor& v_cache, const Tensor& slot_mapping,
                                 const Tensor& q_out) {
  launch_qkv_rope_store(checked_qkv_rope_args(qkv, q_norm, k_norm, positions, cos_sin, params,
                                              k_cache, v_cache, slot_mapping, q_out),
                        stream_);
}

void CudaBackend::attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                            const BatchMeta& meta, const AttentionParams& params,
                            const Tensor& out) {
  check_tensor(q, DType::BF16, "attention q");
  check_tensor(out, DType::BF16, "attention out");
  check_tensor(k_cache, DType::BF16, "k_cache");
  check_tensor(v_cache, DType::BF16, "v_cache");
  check_tensor(meta.cu_seqlens_q, DType::I32, "cu_seqlens_q");
  check_tensor(meta.seq_lens_kv, DType::I32, "seq_lens_kv");
  check_tensor(meta.block_tables, DType::I32, "block_tables");
  const int64_t n_heads = q.size(1), head_dim = q.size(2), n_kv_heads = k_cache.size(2);
  HADRON_CHECK(q.ndim == 3 && k_cache.ndim == 4 && k_cache.size(3) == head_dim &&
                   v_cache.numel() == k_cache.numel() && n_heads % n_kv_heads == 0 &&
                   out.numel() == q.numel() && q.size(0) == meta.n_tokens &&
                   k_cache.size(1) == meta.block_size && meta.block_tables.ndim == 2 &&
                   meta.block_tables.size(0) == meta.n_seqs &&
                   meta.cu_seqlens_q.numel() == meta.n_seqs + 1,
               "attention q {} over cache {} into {} (block size {}, {} sequences)", q.describe(),
               k_cache.describe(), out.describe(), meta.block_size, meta.n_seqs);
  HADRON_CHECK(params.logit_softcap == 0, "logit soft-capping is not implemented on CUDA");
  if (params.sinks.defined()) {
    check_tensor(params.sinks, DType::BF16, "attention sinks");
    HADRON_CHECK(params.sinks.numel() == n_heads, "attention sinks {} for {} heads",
                 params.sinks.describe(), n_heads);
  }
  AttentionArgs args{q.data,
                     k_cache.data,
                     v_cache.data,
                     out.data,
                     meta.cu_seqlens_q.ptr<int32_t>(),
                     meta.seq_lens_kv.ptr<int32_t>(),
                     meta.block_tables.ptr<int32_t>(),
                     meta.n_seqs,
                     meta.n_tokens,
                     meta.max_q_len,
                     meta.max_kv_len,
                     meta.block_size,
                     static_cast<int>(meta.block_tables.size(1)),
                     static_cast<int>(n_heads),
                     static_cast<int>(n_kv_heads),
                     static_cast<int>(head_dim),
                     params.scale,
                     params.sliding_window,
                     params.sinks.defined() ? params.sinks.data : nullptr};
  HADRON_CHECK(!meta.decode_only || meta.n_tokens == meta.n_seqs,
               "decode-only batch of {} tokens for {} sequences", meta.n_tokens, meta.n_seqs);
  // Other batches may hold decode rows too (chunked prefill next to decodes): those go to the
  // split-KV decode kernel as well, since the tiled kernel would spend a 128-query tile per
  // query head on each, reading its KV once per head without splitting it. Which sequences
  // have q_len 1 is known on the device only: both kernels run over the whole batch and each
  // skips the other's sequences.
  args.split_by_q_len = !meta.decode_only;
  const size_t floats = decode_workspace_floats(args, n_sms_);
  HADRON_CHECK(floats * sizeof(float) <= decode_workspace_.bytes(),
               "decode attention needs {} floats of workspace, has {} bytes", floats,
               decode_workspace_.bytes());
  launch_attention_decode(args, static_cast<float*>(decode_workspace_.data()), n_sms_, stream_);
  if (!meta.decode_only) launch_attention_prefill(args, stream_);
}

}  // namespace hadron::cuda
