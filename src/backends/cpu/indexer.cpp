// DeepSeek sparse attention's lightning indexer: the indexer key cache write and the causal
// top-k selection that sparse_mla_attention (mla.cpp) then attends over.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vector_math.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {

namespace {

// out = (x - mean) / sqrt(var + eps) * weight + bias, statistics in double; x and out may alias.
void layer_normalize(const float* x, const float* weight, const float* bias, int64_t width,
                     float eps, float* out) {
  double mean = 0;
  for (int64_t i = 0; i < width; ++i) mean += x[i];
  mean /= static_cast<double>(width);
  double var = 0;
  for (int64_t i = 0; i < width; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(width);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < width; ++i)
    out[i] = static_cast<float>((x[i] - mean) * inv) * weight[i] + bias[i];
}

}  // namespace

void CpuBackend::check_sparse_attention(const IndexerParams& params) const {
  HADRON_CHECK(params.n_heads > 0 && params.head_dim > 0 && params.rope_dim > 0 &&
                   params.rope_dim % 2 == 0 && params.rope_dim <= params.head_dim &&
                   params.top_k > 0,
               "indexer shape: {} heads x {}, rope {}, top-{}", params.n_heads, params.head_dim,
               params.rope_dim, params.top_k);
}

void CpuBackend::indexer_rope_store(const Tensor& q, const Tensor& k, const Tensor& k_norm,
                                    const Tensor& k_bias, const Tensor& positions,
                                    const Tensor& cos_sin, const IndexerParams& params,
                                    const Tensor& index_cache, const Tensor& slot_mapping) {
  const int64_t n_tokens = q.size(0), n_heads = params.n_heads, dim = params.head_dim;
  const int64_t n_slots = index_cache.size(0) * index_cache.size(1);
  HADRON_CHECK(q.dtype == DType::F32 && q.numel() == n_tokens * n_heads * dim &&
                   k.dtype == DType::F32 && k.numel() == n_tokens * dim &&
                   index_cache.dtype == DType::F32 && index_cache.size(-1) == dim &&
                   cos_sin.size(1) == params.rope_dim && positions.size(0) == n_tokens &&
                   slot_mapping.size(0) == n_tokens,
               "indexer_rope_store q {} k {} into {} (table {})", q.describe(), k.describe(),
               index_cache.describe(), cos_sin.describe());
  std::vector<float> weight(dim), bias(dim);
  load_row_f32(k_norm, 0, dim, weight.data());
  load_row_f32(k_bias, 0, dim, bias.data());
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t pos = positions.ptr<int32_t>()[t];
    const int32_t slot = slot_mapping.ptr<int32_t>()[t];
    check_position_and_slot(pos, cos_sin, slot, n_slots);
    const float* rope_row = cos_sin.ptr<float>() + pos * params.rope_dim;
    for (int64_t h = 0; h < n_heads; ++h)
      rope_head(q.ptr<float>() + (t * n_heads + h) * dim, rope_row, params.rope_dim, params.style);
    float* key = index_cache.ptr<float>() + slot * dim;
    layer_normalize(k.ptr<float>() + t * dim, weight.data(), bias.data(), dim, params.norm_eps,
                    key);
    rope_head(key, rope_row, params.rope_dim, params.style);
  }
}

void CpuBackend::indexer_select(const Tensor& q, const Tensor& head_weights,
                                const Tensor& index_cache, const BatchMeta& meta,
                                const IndexerParams& params, const Tensor& selected) {
  const int64_t n_heads = params.n_heads, dim = params.head_dim, top_k = params.top_k;
  HADRON_CHECK(q.dtype == DType::F32 && q.numel() == int64_t{meta.n_tokens} * n_heads * dim &&
                   head_weights.dtype == DType::F32 &&
                   head_weights.numel() == int64_t{meta.n_tokens} * n_heads &&
                   index_cache.dtype == DType::F32 && index_cache.size(-1) == dim &&
                   selected.dtype == DType::I32 &&
                   selected.numel() == int64_t{meta.n_tokens} * top_k,
               "indexer_select q {} weights {} over cache {} into {}", q.describe(),
               head_weights.describe(), index_cache.describe(), selected.describe());
  const int64_t max_blocks = meta.block_tables.size(1), block_size = index_cache.size(1);
  const std::vector<RowPlace> places = row_places(meta);
  ThreadPool::global().parallel_for(
      meta.n_tokens,
      [&](int64_t begin, int64_t end) {
        std::vector<std::pair<float, int32_t>> scored;  // (score, position)
        for (int64_t t = begin; t < end; ++t) {
          const int64_t position = places[t].position;
          const int32_t* block_table =
              meta.block_tables.ptr<int32_t>() + places[t].seq * max_blocks;
          const float* w = head_weights.ptr<float>() + t * n_heads;
          scored.clear();
          for (int32_t j = 0; j <= position; ++j) {
            const float* key = index_cache.ptr<float>() +
                               (block_table[j / block_size] * block_size + j % block_size) * dim;
            float score = 0;
            for (int64_t h = 0; h < n_heads; ++h)
              score += w[h] *
                       std::max(0.0f, dot_f32(q.ptr<float>() + (t * n_heads + h) * dim, key, dim));
            scored.emplace_back(score * params.scale, j);
          }
          const int64_t n_kept = std::min<int64_t>(top_k, static_cast<int64_t>(scored.size()));
          std::partial_sort(scored.begin(), scored.begin() + n_kept, scored.end(),
                            [](const auto& a, const auto& b) {
                              return a.first > b.first ||
                                     (a.first == b.first && a.second < b.second);
                            });
          int32_t* row = selected.ptr<int32_t>() + t * top_k;
          for (int64_t i = 0; i < top_k; ++i) row[i] = i < n_kept ? scored[i].second : -1;
        }
      },
      int64_t{meta.n_tokens} * meta.max_kv_len * n_heads * dim);
}

}  // namespace hadron
