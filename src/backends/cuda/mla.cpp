// CudaBackend's multi-head latent attention ops (kernels in mla.cu).
#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/kernels.h"

namespace hadron::cuda {
namespace {

MlaArgs shape_args(const MlaParams& params) {
  MlaArgs args{};
  args.n_heads = static_cast<int>(params.n_heads);
  args.nope_dim = static_cast<int>(params.nope_dim);
  args.rope_dim = static_cast<int>(params.rope_dim);
  args.latent_dim = static_cast<int>(params.latent_dim);
  args.v_dim = static_cast<int>(params.v_dim);
  args.norm_eps = params.norm_eps;
  args.scale = params.scale;
  args.neox = params.style == RopeStyle::kNeox;
  return args;
}

}  // namespace

void CudaBackend::check_mla(const MlaParams& params) const {
  if (params.n_heads <= 0 || params.latent_dim <= 0 || params.latent_dim > kMlaMaxLatent ||
      params.rope_dim <= 0 || params.rope_dim % 2 != 0 || params.nope_dim < 0 || params.v_dim <= 0)
    input_error(
        "the CUDA backend cannot run latent attention with {} heads, latent {} (at most {}), "
        "rope {}, nope {}, v {}; run this model with --device cpu",
        params.n_heads, params.latent_dim, kMlaMaxLatent, params.rope_dim, params.nope_dim,
        params.v_dim);
}

void CudaBackend::mla_rope_store(const Tensor& q, const Tensor& kv, const Tensor& kv_norm,
                                 const Tensor& positions, const Tensor& cos_sin,
                                 const MlaParams& params, const Tensor& latent_cache,
                                 const Tensor& slot_mapping) {
  check_mla(params);
  check_tensor(q, DType::BF16, "mla q");
  check_tensor(kv, DType::BF16, "mla kv");
  check_tensor(kv_norm, DType::BF16, "mla kv_norm");
  check_tensor(latent_cache, DType::BF16, "latent_cache");
  check_tensor(positions, DType::I32, "positions");
  check_tensor(slot_mapping, DType::I32, "slot_mapping");
  check_tensor(cos_sin, DType::F32, "cos_sin");
  const int64_t n_tokens = q.size(0);
  HADRON_CHECK(
      q.numel() == n_tokens * params.n_heads * params.qk_dim() &&
          kv.numel() == n_tokens * params.entry_dim() && kv_norm.numel() == params.latent_dim &&
          latent_cache.size(-1) == params.entry_dim() && cos_sin.size(1) == params.rope_dim &&
          positions.numel() == n_tokens && slot_mapping.numel() == n_tokens,
      "mla_rope_store q {} kv {} into {} (table {})", q.describe(), kv.describe(),
      latent_cache.describe(), cos_sin.describe());
  MlaArgs args = shape_args(params);
  args.q = q.data;
  args.kv = kv.data;
  args.kv_norm = kv_norm.data;
  args.positions = positions.ptr<int32_t>();
  args.cos_sin = cos_sin.ptr<float>();
  args.slot_mapping = slot_mapping.ptr<int32_t>();
  args.latent_cache = latent_cache.data;
  args.n_tokens = static_cast<int>(n_tokens);
  launch_mla_rope_store(args, stream_);
}

void CudaBackend::mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                                const BatchMeta& meta, const MlaParams& params, const Tensor& out) {
  check_mla(params);
  check_tensor(q, DType::BF16, "mla q");
  check_tensor(latent_cache, DType::BF16, "latent_cache");
  check_tensor(kv_b, DType::BF16, "kv_b");
  check_tensor(out, DType::BF16, "mla out");
  HADRON_CHECK(
      q.numel() == int64_t{meta.n_tokens} * params.n_heads * params.qk_dim() &&
          latent_cache.size(-1) == params.entry_dim() &&
          kv_b.numel() == params.n_heads * (params.nope_dim + params.v_dim) * params.latent_dim &&
          out.numel() == int64_t{meta.n_tokens} * params.n_heads * params.v_dim,
      "mla_attention q {} over cache {} with kv_b {} into {}", q.describe(),
      latent_cache.describe(), kv_b.describe(), out.describe());
  MlaArgs args = shape_args(params);
  args.q = q.data;
  args.latent_cache = latent_cache.data;
  args.kv_b = kv_b.data;
  args.out = out.data;
  args.cu_seqlens_q = meta.cu_seqlens_q.ptr<int32_t>();
  args.seq_lens_kv = meta.seq_lens_kv.ptr<int32_t>();
  args.block_tables = meta.block_tables.ptr<int32_t>();
  args.n_tokens = meta.n_tokens;
  args.n_seqs = meta.n_seqs;
  args.block_size = static_cast<int>(latent_cache.size(1));
  args.max_blocks_per_seq = static_cast<int>(meta.block_tables.size(1));
  launch_mla_attention(args, stream_);
}

}  // namespace hadron::cuda
