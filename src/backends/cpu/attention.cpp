// Paged KV-cache writes and causal grouped-query attention over the paged cache.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/vector_math.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {

void CpuBackend::store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache,
                          const Tensor& v_cache, const Tensor& slot_mapping) {
  const int64_t n_tokens = k.size(0);
  const int64_t token_elems = k.size(1) * k.size(2);
  const int64_t n_slots = k_cache.size(0) * k_cache.size(1);
  // Same dtype: copied; an FP8 cache takes F32 rows, rounded to e4m3 (scale 1).
  const bool fp8 = k_cache.dtype == DType::F8_E4M3 && k.dtype == DType::F32;
  HADRON_CHECK(
      (fp8 || k.dtype == k_cache.dtype) && v.dtype == k.dtype && v_cache.dtype == k_cache.dtype &&
          token_elems == k_cache.size(2) * k_cache.size(3) && slot_mapping.size(0) == n_tokens,
      "store_kv {} into {}", k.describe(), k_cache.describe());
  const size_t in_bytes = token_elems * dtype_size(k.dtype);
  const size_t out_bytes = token_elems * dtype_size(k_cache.dtype);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t slot = slot_mapping.ptr<int32_t>()[t];
    HADRON_CHECK(slot >= 0 && slot < n_slots, "slot {} outside cache of {}", slot, n_slots);
    for (const auto& [src, dst] : {std::pair{&k, &k_cache}, std::pair{&v, &v_cache}}) {
      const char* from = static_cast<const char*>(src->data) + t * in_bytes;
      char* to = static_cast<char*>(dst->data) + slot * out_bytes;
      if (fp8)
        convert_from_f32(reinterpret_cast<const float*>(from), to, DType::F8_E4M3, token_elems);
      else
        std::memcpy(to, from, in_bytes);
    }
  }
}

namespace {

struct AttentionJob {
  const float* q;
  const void* k_cache;  // F32, or F8_E4M3 codes (scale 1, KvCache's FP8 layout)
  const void* v_cache;
  DType cache_dtype;
  const int32_t* block_table;
  int64_t block_size, n_heads, n_kv_heads, head_dim;
  float scale;
  int sliding_window;
  const float* sinks;  // [n_heads] or null
};

// One query head of one token at `position` attends to keys [first, position] (and to the
// head's sink logit, when there is one).
// The head_dim values of a cache row at element `offset`, as fp32 (widened into `scratch`
// from an FP8 cache).
const float* cache_row(const AttentionJob& job, const void* cache, int64_t offset,
                       std::vector<float>& scratch) {
  if (job.cache_dtype == DType::F32) return static_cast<const float*>(cache) + offset;
  scratch.resize(job.head_dim);
  convert_to_f32(static_cast<const uint8_t*>(cache) + offset, job.cache_dtype, scratch.data(),
                 job.head_dim);
  return scratch.data();
}

void attend(const AttentionJob& job, const float* q, int64_t head, int64_t kv_head,
            int64_t position, float* out, std::vector<float>& scores) {
  std::vector<float> row;
  const int64_t first =
      job.sliding_window > 0 ? std::max<int64_t>(0, position - job.sliding_window + 1) : 0;
  const int64_t n_keys = position - first + 1;
  scores.resize(n_keys);
  float max_score = -std::numeric_limits<float>::infinity();
  auto key_offset = [&](int64_t j) {
    const int64_t block = job.block_table[j / job.block_size];
    return ((block * job.block_size + j % job.block_size) * job.n_kv_heads + kv_head) *
           job.head_dim;
  };
  for (int64_t j = first; j <= position; ++j) {
    const float* key = cache_row(job, job.k_cache, key_offset(j), row);
    scores[j - first] = dot_f32(q, key, job.head_dim) * job.scale;
    max_score = std::max(max_score, scores[j - first]);
  }
  if (job.sinks != nullptr) max_score = std::max(max_score, job.sinks[head]);
  double sum = job.sinks != nullptr ? std::exp(job.sinks[head] - max_score) : 0.0;
  for (float& s : scores) sum += (s = std::exp(s - max_score));
  std::fill(out, out + job.head_dim, 0.0f);
  for (int64_t j = first; j <= position; ++j) {
    const float weight = static_cast<float>(scores[j - first] / sum);
    const float* value = cache_row(job, job.v_cache, key_offset(j), row);
    axpy_f32(weight, value, out, job.head_dim);
  }
}

}  // namespace

std::vector<RowPlace> row_places(const BatchMeta& meta) {
  const int32_t* cu_seqlens = meta.cu_seqlens_q.ptr<int32_t>();
  const int32_t* kv_lens = meta.seq_lens_kv.ptr<int32_t>();
  std::vector<RowPlace> places(meta.n_tokens);
  for (int32_t s = 0; s < meta.n_seqs; ++s) {
    const int64_t q_len = cu_seqlens[s + 1] - cu_seqlens[s];
    for (int32_t t = cu_seqlens[s]; t < cu_seqlens[s + 1]; ++t)
      places[t] = {s, kv_lens[s] - q_len + (t - cu_seqlens[s])};
  }
  return places;
}

void CpuBackend::attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                           const BatchMeta& meta, const AttentionParams& params,
                           const Tensor& out) {
  const int64_t n_heads = q.size(1), head_dim = q.size(2), n_kv_heads = k_cache.size(2);
  HADRON_CHECK(
      q.dtype == DType::F32 && (k_cache.dtype == DType::F32 || k_cache.dtype == DType::F8_E4M3) &&
          v_cache.dtype == k_cache.dtype && k_cache.size(3) == head_dim &&
          n_heads % n_kv_heads == 0 && out.numel() == q.numel() && q.size(0) == meta.n_tokens,
      "attention q {} over cache {} into {}", q.describe(), k_cache.describe(), out.describe());
  HADRON_CHECK(params.logit_softcap == 0, "logit soft-capping is not implemented on the CPU");
  std::vector<float> sinks;
  if (params.sinks.defined()) {
    HADRON_CHECK(params.sinks.numel() == n_heads, "attention sinks {} for {} heads",
                 params.sinks.describe(), n_heads);
    sinks.resize(n_heads);
    load_row_f32(params.sinks, 0, n_heads, sinks.data());
  }
  const int64_t max_blocks = meta.block_tables.size(1);
  const std::vector<RowPlace> places = row_places(meta);
  const int64_t group = n_heads / n_kv_heads;
  const int64_t work = int64_t{meta.n_tokens} * n_heads * meta.max_kv_len * head_dim * 2;
  ThreadPool::global().parallel_for(
      meta.n_tokens * n_heads,
      [&](int64_t begin, int64_t end) {
        std::vector<float> scores;
        for (int64_t item = begin; item < end; ++item) {
          const int64_t t = item / n_heads, h = item % n_heads;
          const int64_t s = places[t].seq;
          const AttentionJob job{q.ptr<float>(),
                                 k_cache.data,
                                 v_cache.data,
                                 k_cache.dtype,
                                 meta.block_tables.ptr<int32_t>() + s * max_blocks,
                                 k_cache.size(1),
                                 n_heads,
                                 n_kv_heads,
                                 head_dim,
                                 params.scale,
                                 params.sliding_window,
                                 sinks.empty() ? nullptr : sinks.data()};
          attend(job, q.ptr<float>() + (t * n_heads + h) * head_dim, h, h / group,
                 places[t].position, out.ptr<float>() + (t * n_heads + h) * head_dim, scores);
        }
      },
      work);
}

}  // namespace hadron
