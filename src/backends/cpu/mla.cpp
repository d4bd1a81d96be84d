// Multi-head latent attention: the latent cache write and causal attention over it in the
// absorbed form (queries folded into latent space, values read from it).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vector_math.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {

void CpuBackend::check_mla(const MlaParams& params) const {
  HADRON_CHECK(params.n_heads > 0 && params.latent_dim > 0 && params.rope_dim > 0 &&
                   params.rope_dim % 2 == 0 && params.nope_dim >= 0 && params.v_dim > 0,
               "MLA shape: {} heads, nope {}, rope {}, latent {}, v {}", params.n_heads,
               params.nope_dim, params.rope_dim, params.latent_dim, params.v_dim);
}

void CpuBackend::mla_rope_store(const Tensor& q, const Tensor& kv, const Tensor& kv_norm,
                                const Tensor& positions, const Tensor& cos_sin,
                                const MlaParams& params, const Tensor& latent_cache,
                                const Tensor& slot_mapping) {
  const int64_t n_tokens = q.size(0), n_heads = params.n_heads, qk = params.qk_dim();
  const int64_t latent = params.latent_dim, rope = params.rope_dim, entry = params.entry_dim();
  const int64_t n_slots = latent_cache.size(0) * latent_cache.size(1);
  HADRON_CHECK(q.dtype == DType::F32 && q.numel() == n_tokens * n_heads * qk &&
                   kv.dtype == DType::F32 && kv.numel() == n_tokens * entry &&
                   latent_cache.dtype == DType::F32 && latent_cache.size(-1) == entry &&
                   cos_sin.size(1) == rope && positions.size(0) == n_tokens &&
                   slot_mapping.size(0) == n_tokens,
               "mla_rope_store q {} kv {} into {} (table {})", q.describe(), kv.describe(),
               latent_cache.describe(), cos_sin.describe());
  std::vector<float> norm_weight(latent);
  load_row_f32(kv_norm, 0, latent, norm_weight.data());
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t pos = positions.ptr<int32_t>()[t];
    const int32_t slot = slot_mapping.ptr<int32_t>()[t];
    check_position_and_slot(pos, cos_sin, slot, n_slots);
    const float* rope_row = cos_sin.ptr<float>() + pos * rope;
    for (int64_t h = 0; h < n_heads; ++h)
      rope_head(q.ptr<float>() + (t * n_heads + h) * qk + params.nope_dim, rope_row, rope,
                params.style);
    const float* in = kv.ptr<float>() + t * entry;
    float* out = latent_cache.ptr<float>() + slot * entry;
    rms_normalize(in, norm_weight.data(), latent, params.norm_eps, out);
    std::copy(in + latent, in + entry, out + latent);
    rope_head(out + latent, rope_row, rope, params.style);
  }
}

namespace {

// One head of one token: the head's kv_b rows in fp32 and scratch, reused across items.
struct MlaScratch {
  std::vector<float> w_k, w_v;     // [nope, latent], [v, latent]
  std::vector<float> q_latent, o;  // [latent]
  std::vector<float> scores;       // [keys]
  std::vector<int32_t> keys;       // positions attended to
};

// Attends query head `q` ([nope | rope]) to the sequence's entries at positions s.keys.
void attend_latent(const MlaParams& params, const float* q, const float* cache,
                   const int32_t* block_table, int64_t block_size, MlaScratch& s, float* out) {
  const int64_t latent = params.latent_dim, entry = params.entry_dim();
  std::fill(s.q_latent.begin(), s.q_latent.end(), 0.0f);
  for (int64_t i = 0; i < params.nope_dim; ++i)
    axpy_f32(q[i], s.w_k.data() + i * latent, s.q_latent.data(), latent);
  const float* q_rope = q + params.nope_dim;
  auto entry_of = [&](int64_t j) {
    return cache + (block_table[j / block_size] * block_size + j % block_size) * entry;
  };
  const size_t n_keys = s.keys.size();
  s.scores.resize(n_keys);
  float max_score = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n_keys; ++i) {
    const float* e = entry_of(s.keys[i]);
    s.scores[i] =
        (dot_f32(s.q_latent.data(), e, latent) + dot_f32(q_rope, e + latent, params.rope_dim)) *
        params.scale;
    max_score = std::max(max_score, s.scores[i]);
  }
  double sum = 0;
  for (float& score : s.scores) sum += (score = std::exp(score - max_score));
  std::fill(s.o.begin(), s.o.end(), 0.0f);
  for (size_t i = 0; i < n_keys; ++i)
    axpy_f32(static_cast<float>(s.scores[i] / sum), entry_of(s.keys[i]), s.o.data(), latent);
  for (int64_t d = 0; d < params.v_dim; ++d)
    out[d] = dot_f32(s.w_v.data() + d * latent, s.o.data(), latent);
}

// The positions token t (at `position`) attends to: [0, position], or its row of `selected`.
void select_keys(const Tensor& selected, int64_t t, int64_t position, std::vector<int32_t>& keys) {
  keys.clear();
  if (!selected.defined()) {
    for (int32_t j = 0; j <= position; ++j) keys.push_back(j);
    return;
  }
  const int64_t top_k = selected.size(1);
  for (const int32_t* j = selected.ptr<int32_t>() + t * top_k;
       j != selected.ptr<int32_t>() + (t + 1) * top_k; ++j) {
    if (*j < 0) continue;
    HADRON_CHECK(*j <= position, "token {} at position {} selected position {}", t, position, *j);
    keys.push_back(*j);
  }
}

// Causal MLA (see Backend::mla_attention), restricted to each token's row of `selected`
// (I32 [T, top_k], -1 skipped) when it is defined.
void attend_all(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                const Tensor& selected, const BatchMeta& meta, const MlaParams& params,
                const Tensor& out) {
  const int64_t n_heads = params.n_heads, qk = params.qk_dim(), latent = params.latent_dim;
  const int64_t head_rows = params.nope_dim + params.v_dim;
  HADRON_CHECK(q.dtype == DType::F32 && q.numel() == int64_t{meta.n_tokens} * n_heads * qk &&
                   latent_cache.dtype == DType::F32 &&
                   latent_cache.size(-1) == params.entry_dim() &&
                   kv_b.numel() == n_heads * head_rows * latent &&
                   out.numel() == int64_t{meta.n_tokens} * n_heads * params.v_dim,
               "mla_attention q {} over cache {} with kv_b {} into {}", q.describe(),
               latent_cache.describe(), kv_b.describe(), out.describe());
  const int64_t max_blocks = meta.block_tables.size(1);
  const std::vector<RowPlace> places = row_places(meta);
  const int64_t work = int64_t{meta.n_tokens} * n_heads *
                       (meta.max_kv_len * params.entry_dim() * 2 + head_rows * latent * 2);
  // Head-major items, so a worker converts each head's kv_b rows once for its tokens.
  ThreadPool::global().parallel_for(
      n_heads * meta.n_tokens,
      [&](int64_t begin, int64_t end) {
        MlaScratch s{std::vector<float>(params.nope_dim * latent),
                     std::vector<float>(params.v_dim * latent),
                     std::vector<float>(latent),
                     std::vector<float>(latent),
                     {},
                     {}};
        int64_t loaded_head = -1;
        for (int64_t item = begin; item < end; ++item) {
          const int64_t h = item / meta.n_tokens, t = item % meta.n_tokens;
          if (h != loaded_head) {
            load_row_f32(kv_b, h * head_rows * latent, params.nope_dim * latent, s.w_k.data());
            load_row_f32(kv_b, (h * head_rows + params.nope_dim) * latent, params.v_dim * latent,
                         s.w_v.data());
            loaded_head = h;
          }
          const RowPlace place = places[t];
          select_keys(selected, t, place.position, s.keys);
          attend_latent(params, q.ptr<float>() + (t * n_heads + h) * qk, latent_cache.ptr<float>(),
                        meta.block_tables.ptr<int32_t>() + place.seq * max_blocks,
                        latent_cache.size(1), s,
                        out.ptr<float>() + (t * n_heads + h) * params.v_dim);
        }
      },
      work);
}

}  // namespace

void CpuBackend::mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                               const BatchMeta& meta, const MlaParams& params, const Tensor& out) {
  attend_all(q, latent_cache, kv_b, Tensor{}, meta, params, out);
}

void CpuBackend::sparse_mla_attention(const Tensor& q, const Tensor& latent_cache,
                                      const Tensor& kv_b, const Tensor& selected,
                                      const BatchMeta& meta, const MlaParams& params,
                                      const Tensor& out) {
  HADRON_CHECK(
      selected.dtype == DType::I32 && selected.ndim == 2 && selected.size(0) == meta.n_tokens,
      "sparse_mla_attention: selected {} for {} tokens", selected.describe(), meta.n_tokens);
  attend_all(q, latent_cache, kv_b, selected, meta, params, out);
}

}  // namespace hadron
