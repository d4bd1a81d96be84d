// The CPU multi-head latent attention (backends/cpu/mla.cpp: latent cache write and the
// absorbed form) against the expanded form written out here: per head the key
// [W_k norm(latent) | rope(k_rope)] and the value W_v norm(latent) of every cached token, then
// plain causal softmax attention, in double. Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ops/backend.h"
#include "reference_inputs.h"

namespace hadron {
namespace {

using testing::f32;
using testing::i32;
using testing::normal_floats;

// Rotates adjacent pairs (x[2i], x[2i+1]) by position * freq[i], in double.
void rope_pairs(double* x, int64_t dim, int64_t position) {
  for (int64_t i = 0; i < dim / 2; ++i) {
    const double freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / dim);
    const double c = std::cos(position * freq), s = std::sin(position * freq);
    const double a = x[2 * i], b = x[2 * i + 1];
    x[2 * i] = a * c - b * s;
    x[2 * i + 1] = b * c + a * s;
  }
}

TEST(MlaReference, AbsorbedFormEqualsExpandedAttention) {
  std::mt19937_64 rng(std::random_device{}());
  MlaParams p;
  p.n_heads = 3, p.nope_dim = 8, p.rope_dim = 4, p.latent_dim = 12, p.v_dim = 6;
  p.scale = 0.37f;
  const int64_t qk = p.qk_dim(), entry = p.entry_dim(), block_size = 4, n_blocks = 8;
  // Two sequences: 5 cached tokens + 3 new ones, and 2 new ones from the start.
  const std::vector<int64_t> past = {5, 0}, q_len = {3, 2};
  std::vector<int32_t> block_tables = {6, 1, 3, 0, 2, 5, 7, 4};  // [2, 4], shuffled blocks
  const int64_t max_blocks = 4;
  std::vector<float> kv_norm = normal_floats(rng, p.latent_dim, 1.0f);
  std::vector<float> kv_b =
      normal_floats(rng, p.n_heads * (p.nope_dim + p.v_dim) * p.latent_dim, 0.3f);
  std::vector<float> cos_sin(32 * p.rope_dim);
  for (int64_t pos = 0; pos < 32; ++pos)
    for (int64_t i = 0; i < p.rope_dim / 2; ++i) {
      const double freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / p.rope_dim);
      cos_sin[pos * p.rope_dim + i] = static_cast<float>(std::cos(pos * freq));
      cos_sin[pos * p.rope_dim + p.rope_dim / 2 + i] = static_cast<float>(std::sin(pos * freq));
    }
  auto backend = make_cpu_backend();
  std::vector<float> cache(n_blocks * block_size * entry, 0.0f);
  const Tensor cache_t =
      Tensor::view_of(cache.data(), DType::F32, {n_blocks, block_size, 1, entry});
  // Every token's raw kv (kv_a_proj output) per sequence, written to the cache as steps would.
  std::vector<std::vector<float>> raw_kv(2);
  std::vector<float> q_all;
  std::vector<int32_t> positions, slots;
  for (int s = 0; s < 2; ++s) {
    raw_kv[s] = normal_floats(rng, (past[s] + q_len[s]) * entry, 1.0f);
    for (int64_t j = 0; j < past[s] + q_len[s]; ++j) {
      const auto slot = static_cast<int32_t>(
          block_tables[s * max_blocks + j / block_size] * block_size + j % block_size);
      if (j < past[s]) {  // an earlier step's write, through the same op
        std::vector<float> q_dummy(p.n_heads * qk, 0.0f),
            kv(raw_kv[s].begin() + j * entry, raw_kv[s].begin() + (j + 1) * entry);
        std::vector<int32_t> pos = {static_cast<int32_t>(j)}, slot_v = {slot};
        backend->mla_rope_store(f32(q_dummy, {1, p.n_heads, qk}), f32(kv, {1, entry}),
                                f32(kv_norm, {p.latent_dim}), i32(pos, {1}),
                                f32(cos_sin, {32, p.rope_dim}), p, cache_t, i32(slot_v, {1}));
      } else {
        positions.push_back(static_cast<int32_t>(j));
        slots.push_back(slot);
      }
    }
  }
  const int64_t T = q_len[0] + q_len[1];
  std::vector<float> q = normal_floats(rng, T * p.n_heads * qk, 1.0f), q_raw = q;
  std::vector<float> kv_step;
  for (int s = 0; s < 2; ++s)
    kv_step.insert(kv_step.end(), raw_kv[s].begin() + past[s] * entry, raw_kv[s].end());
  backend->mla_rope_store(f32(q, {T, p.n_heads, qk}), f32(kv_step, {T, entry}),
                          f32(kv_norm, {p.latent_dim}), i32(positions, {T}),
                          f32(cos_sin, {32, p.rope_dim}), p, cache_t, i32(slots, {T}));
  std::vector<int32_t> cu = {0, static_cast<int32_t>(q_len[0]), static_cast<int32_t>(T)};
  std::vector<int32_t> kv_lens = {static_cast<int32_t>(past[0] + q_len[0]),
                                  static_cast<int32_t>(past[1] + q_len[1])};
  BatchMeta meta;
  meta.n_tokens = static_cast<int>(T), meta.n_seqs = 2, meta.max_q_len = 3, meta.max_kv_len = 8;
  meta.block_size = static_cast<int>(block_size);
  meta.positions = i32(positions, {T});
  meta.cu_seqlens_q = i32(cu, {3});
  meta.seq_lens_kv = i32(kv_lens, {2});
  meta.slot_mapping = i32(slots, {T});
  meta.block_tables = i32(block_tables, {2, max_blocks});
  std::vector<float> out(T * p.n_heads * p.v_dim);
  backend->mla_attention(f32(q, {T, p.n_heads, qk}), cache_t,
                         f32(kv_b, {p.n_heads * (p.nope_dim + p.v_dim), p.latent_dim}), meta, p,
                         f32(out, {T, p.n_heads, p.v_dim}));

  // The expanded form.
  double worst = 0, max_ref = 0;
  for (int64_t t = 0; t < T; ++t) {
    const int s = t < q_len[0] ? 0 : 1;
    const int64_t position = positions[t];
    for (int64_t h = 0; h < p.n_heads; ++h) {
      const float* w_k = kv_b.data() + h * (p.nope_dim + p.v_dim) * p.latent_dim;
      const float* w_v = w_k + p.nope_dim * p.latent_dim;
      std::vector<double> query(q_raw.begin() + (t * p.n_heads + h) * qk,
                                q_raw.begin() + (t * p.n_heads + h + 1) * qk);
      rope_pairs(query.data() + p.nope_dim, p.rope_dim, position);
      std::vector<double> scores(position + 1), value_sum(p.v_dim, 0.0);
      std::vector<std::vector<double>> values(position + 1);
      for (int64_t j = 0; j <= position; ++j) {
        const float* raw = raw_kv[s].data() + j * entry;
        double ms = 0;
        for (int64_t i = 0; i < p.latent_dim; ++i) ms += double{raw[i]} * raw[i];
        const double inv_rms = 1.0 / std::sqrt(ms / p.latent_dim + p.norm_eps);
        std::vector<double> latent(p.latent_dim), key(qk);
        for (int64_t i = 0; i < p.latent_dim; ++i) latent[i] = raw[i] * inv_rms * kv_norm[i];
        for (int64_t d = 0; d < p.nope_dim; ++d)
          for (int64_t i = 0; i < p.latent_dim; ++i)
            key[d] += w_k[d * p.latent_dim + i] * latent[i];
        for (int64_t d = 0; d < p.rope_dim; ++d) key[p.nope_dim + d] = raw[p.latent_dim + d];
        rope_pairs(key.data() + p.nope_dim, p.rope_dim, j);
        values[j].assign(p.v_dim, 0.0);
        for (int64_t d = 0; d < p.v_dim; ++d)
          for (int64_t i = 0; i < p.latent_dim; ++i)
            values[j][d] += w_v[d * p.latent_dim + i] * latent[i];
        scores[j] = std::inner_product(query.begin(), query.end(), key.begin(), 0.0) * p.scale;
      }
      const double max_score = *std::max_element(scores.begin(), scores.end());
      double sum = 0;
      for (double& score : scores) sum += (score = std::exp(score - max_score));
      for (int64_t j = 0; j <= position; ++j)
        for (int64_t d = 0; d < p.v_dim; ++d) value_sum[d] += scores[j] / sum * values[j][d];
      for (int64_t d = 0; d < p.v_dim; ++d) {
        const double ours = out[(t * p.n_heads + h) * p.v_dim + d];
        worst = std::max(worst, std::abs(ours - value_sum[d]));
        max_ref = std::max(max_ref, std::abs(value_sum[d]));
      }
    }
  }
  ASSERT_GT(max_ref, 0.1);
  EXPECT_LE(worst / max_ref, 1e-5) << "worst |diff| " << worst << " of max " << max_ref;
}

}  // namespace
}  // namespace hadron
