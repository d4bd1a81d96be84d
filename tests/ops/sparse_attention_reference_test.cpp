// The CPU DeepSeek sparse attention (backends/cpu/indexer.cpp and sparse_mla_attention in
// mla.cpp) against definitions written out here: the indexer's top-k from scores computed in
// double from the raw inputs, and attention over a selection equal to dense MLA over a cache
// holding only the selected entries. Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "ops/backend.h"
#include "reference_inputs.h"

namespace hadron {
namespace {

using testing::f32;
using testing::i32;
using testing::normal_floats;

// cos_sin rows as the model's table: rope_dim/2 cosines then as many sines.
std::vector<float> rope_table(int64_t n_positions, int64_t rope_dim) {
  std::vector<float> table(n_positions * rope_dim);
  for (int64_t pos = 0; pos < n_positions; ++pos)
    for (int64_t i = 0; i < rope_dim / 2; ++i) {
      const double angle = pos * std::pow(10000.0, -2.0 * static_cast<double>(i) / rope_dim);
      table[pos * rope_dim + i] = static_cast<float>(std::cos(angle));
      table[pos * rope_dim + rope_dim / 2 + i] = static_cast<float>(std::sin(angle));
    }
  return table;
}

// Rotates halves (x[i], x[i + d/2]) of the first `dim` values by position * freq[i], in double.
void rope_halves(double* x, int64_t dim, int64_t position) {
  for (int64_t i = 0; i < dim / 2; ++i) {
    const double angle = position * std::pow(10000.0, -2.0 * static_cast<double>(i) / dim);
    const double a = x[i], b = x[i + dim / 2];
    x[i] = a * std::cos(angle) - b * std::sin(angle);
    x[i + dim / 2] = b * std::cos(angle) + a * std::sin(angle);
  }
}

// max |a - b| / max |a| over the first n values of each, and max |a| (so a test can check the
// comparison is not of near-zeros).
std::pair<double, double> max_relative_error(const float* a, const float* b, int64_t n) {
  double worst = 0, max_ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::abs(double{a[i]} - b[i]));
    max_ref = std::max(max_ref, std::abs(double{a[i]}));
  }
  return {worst / max_ref, max_ref};
}

// One sequence of n tokens in one step, its cache in blocks of 4 laid out in reverse.
struct OneSequence {
  explicit OneSequence(int64_t n) : n_tokens(n) {
    const int64_t n_blocks = (n + 3) / 4;
    for (int64_t b = 0; b < n_blocks; ++b)
      block_table.push_back(static_cast<int32_t>(n_blocks - 1 - b));
    for (int64_t j = 0; j < n; ++j) {
      positions.push_back(static_cast<int32_t>(j));
      slots.push_back(static_cast<int32_t>(block_table[j / 4] * 4 + j % 4));
    }
    cu = {0, static_cast<int32_t>(n)};
    kv_lens = {static_cast<int32_t>(n)};
    meta.n_tokens = static_cast<int>(n), meta.n_seqs = 1;
    meta.max_q_len = static_cast<int>(n), meta.max_kv_len = static_cast<int>(n);
    meta.block_size = 4;
    meta.positions = i32(positions, {n});
    meta.cu_seqlens_q = i32(cu, {2});
    meta.seq_lens_kv = i32(kv_lens, {1});
    meta.slot_mapping = i32(slots, {n});
    meta.block_tables = i32(block_table, {1, n_blocks});
  }
  int64_t n_blocks() const { return static_cast<int64_t>(block_table.size()); }

  int64_t n_tokens;
  std::vector<int32_t> block_table, positions, slots, cu, kv_lens;
  BatchMeta meta;
};

TEST(SparseAttentionReference, IndexerSelectsTheTopKByScore) {
  std::mt19937_64 rng(std::random_device{}());
  IndexerParams p;
  p.n_heads = 3, p.head_dim = 8, p.rope_dim = 4, p.top_k = 5, p.scale = 0.2f;
  const int64_t n = 13, dim = p.head_dim;
  OneSequence seq(n);
  std::vector<float> q = normal_floats(rng, n * p.n_heads * dim, 1.0f), q_raw = q;
  std::vector<float> k = normal_floats(rng, n * dim, 1.0f);
  std::vector<float> norm = normal_floats(rng, dim, 1.0f), bias = normal_floats(rng, dim, 0.5f);
  std::vector<float> w = normal_floats(rng, n * p.n_heads, 1.0f);
  std::vector<float> table = rope_table(n, p.rope_dim);
  std::vector<float> cache(seq.n_blocks() * 4 * dim, 0.0f);
  const Tensor cache_t = f32(cache, {seq.n_blocks(), 4, dim});
  std::vector<int32_t> selected(n * p.top_k);
  auto backend = make_cpu_backend();
  backend->check_sparse_attention(p);
  backend->indexer_rope_store(f32(q, {n, p.n_heads, dim}), f32(k, {n, dim}), f32(norm, {dim}),
                              f32(bias, {dim}), seq.meta.positions, f32(table, {n, p.rope_dim}), p,
                              cache_t, seq.meta.slot_mapping);
  backend->indexer_select(f32(q, {n, p.n_heads, dim}), f32(w, {n, p.n_heads}), cache_t, seq.meta, p,
                          i32(selected, {n, p.top_k}));

  // Keys in double: LayerNorm with bias, then rope on the first rope_dim values.
  std::vector<std::vector<double>> keys(n);
  for (int64_t j = 0; j < n; ++j) {
    const float* x = k.data() + j * dim;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < dim; ++i) mean += x[i] / static_cast<double>(dim);
    for (int64_t i = 0; i < dim; ++i) var += (x[i] - mean) * (x[i] - mean) / dim;
    for (int64_t i = 0; i < dim; ++i)
      keys[j].push_back((x[i] - mean) / std::sqrt(var + p.norm_eps) * norm[i] + bias[i]);
    rope_halves(keys[j].data(), p.rope_dim, j);
  }
  for (int64_t t = 0; t < n; ++t) {
    std::vector<double> scores(t + 1, 0.0);
    for (int64_t h = 0; h < p.n_heads; ++h) {
      std::vector<double> query(q_raw.begin() + (t * p.n_heads + h) * dim,
                                q_raw.begin() + (t * p.n_heads + h + 1) * dim);
      rope_halves(query.data(), p.rope_dim, t);
      for (int64_t j = 0; j <= t; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < dim; ++i) dot += query[i] * keys[j][i];
        scores[j] += w[t * p.n_heads + h] * std::max(0.0, dot) * p.scale;
      }
    }
    const int32_t* row = selected.data() + t * p.top_k;
    const int64_t n_kept = std::min<int64_t>(p.top_k, t + 1);
    std::vector<bool> chosen(t + 1, false);
    for (int64_t i = 0; i < p.top_k; ++i) {
      if (i >= n_kept) {
        EXPECT_EQ(row[i], -1) << "token " << t << " entry " << i;
        continue;
      }
      ASSERT_GE(row[i], 0) << "token " << t;
      ASSERT_LE(row[i], t) << "token " << t;
      EXPECT_FALSE(chosen[row[i]]) << "token " << t << " selects " << row[i] << " twice";
      chosen[row[i]] = true;
      if (i > 0) EXPECT_GE(scores[row[i - 1]], scores[row[i]] - 1e-5) << "token " << t;
    }
    // Every selected score is at least every unselected one (up to float rounding).
    for (int64_t a = 0; a <= t; ++a)
      for (int64_t b = 0; b <= t; ++b)
        if (chosen[a] && !chosen[b])
          EXPECT_GE(scores[a], scores[b] - 1e-5) << "token " << t << ": " << a << " vs " << b;
  }
}

// MLA entries and queries of one sequence, written through mla_rope_store.
struct LatentSetup {
  MlaParams p;
  std::vector<float> q, cache, kv_b;
};

LatentSetup make_latent(std::mt19937_64& rng, OneSequence& seq) {
  LatentSetup s;
  MlaParams& p = s.p;
  p.n_heads = 2, p.nope_dim = 6, p.rope_dim = 4, p.latent_dim = 10, p.v_dim = 5, p.scale = 0.4f;
  const int64_t n = seq.n_tokens, qk = p.qk_dim(), entry = p.entry_dim();
  s.q = normal_floats(rng, n * p.n_heads * qk, 1.0f);
  s.kv_b = normal_floats(rng, p.n_heads * (p.nope_dim + p.v_dim) * p.latent_dim, 0.3f);
  std::vector<float> kv = normal_floats(rng, n * entry, 1.0f);
  std::vector<float> norm = normal_floats(rng, p.latent_dim, 1.0f);
  std::vector<float> table = rope_table(n, p.rope_dim);
  s.cache.assign(seq.n_blocks() * 4 * entry, 0.0f);
  make_cpu_backend()->mla_rope_store(
      f32(s.q, {n, p.n_heads, qk}), f32(kv, {n, entry}), f32(norm, {p.latent_dim}),
      seq.meta.positions, f32(table, {n, p.rope_dim}), p,
      f32(s.cache, {seq.n_blocks(), 4, 1, entry}), seq.meta.slot_mapping);
  return s;
}

TEST(SparseAttentionReference, SelectingEveryPredecessorEqualsDenseMla) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t n = 11;
  OneSequence seq(n);
  LatentSetup s = make_latent(rng, seq);
  const MlaParams& p = s.p;
  const int64_t top_k = n + 2;  // room for -1 padding
  std::vector<int32_t> selected(n * top_k, -1);
  for (int64_t t = 0; t < n; ++t) {  // every predecessor, in a shuffled order
    std::vector<int32_t> keys;
    for (int32_t j = 0; j <= t; ++j) keys.push_back(j);
    std::shuffle(keys.begin(), keys.end(), rng);
    std::copy(keys.begin(), keys.end(), selected.begin() + t * top_k);
  }
  const Tensor cache_t = f32(s.cache, {seq.n_blocks(), 4, 1, p.entry_dim()});
  const Tensor kv_b_t = f32(s.kv_b, {p.n_heads * (p.nope_dim + p.v_dim), p.latent_dim});
  std::vector<float> dense(n * p.n_heads * p.v_dim), sparse(dense.size());
  auto backend = make_cpu_backend();
  backend->mla_attention(f32(s.q, {n, p.n_heads, p.qk_dim()}), cache_t, kv_b_t, seq.meta, p,
                         f32(dense, {n, p.n_heads, p.v_dim}));
  backend->sparse_mla_attention(f32(s.q, {n, p.n_heads, p.qk_dim()}), cache_t, kv_b_t,
                                i32(selected, {n, top_k}), seq.meta, p,
                                f32(sparse, {n, p.n_heads, p.v_dim}));
  const auto [error, max_ref] =
      max_relative_error(dense.data(), sparse.data(), static_cast<int64_t>(dense.size()));
  ASSERT_GT(max_ref, 0.1);
  EXPECT_LE(error, 1e-6);
}

TEST(SparseAttentionReference, AttendingToASelectionEqualsDenseMlaOverIt) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t n = 14;
  OneSequence seq(n);
  LatentSetup s = make_latent(rng, seq);
  const MlaParams& p = s.p;
  const int64_t qk = p.qk_dim(), entry = p.entry_dim(), last = n - 1;
  // The last token attends to a random half of its predecessors (itself included).
  std::vector<int32_t> keys;
  for (int32_t j = 0; j <= last; ++j)
    if (j == last || rng() % 2 == 0) keys.push_back(j);
  const auto n_keys = static_cast<int64_t>(keys.size());
  std::vector<int32_t> selected(n * n, -1);
  for (int64_t t = 0; t < last; ++t) selected[t * n] = static_cast<int32_t>(t);
  std::copy(keys.begin(), keys.end(), selected.begin() + last * n);
  std::vector<float> sparse(n * p.n_heads * p.v_dim);
  auto backend = make_cpu_backend();
  backend->sparse_mla_attention(
      f32(s.q, {n, p.n_heads, qk}), f32(s.cache, {seq.n_blocks(), 4, 1, entry}),
      f32(s.kv_b, {p.n_heads * (p.nope_dim + p.v_dim), p.latent_dim}), i32(selected, {n, n}),
      seq.meta, p, f32(sparse, {n, p.n_heads, p.v_dim}));

  // Dense MLA of the last query over a cache holding only the selected entries (they are
  // stored roped, so their order and new positions do not matter).
  OneSequence small(n_keys);
  std::vector<float> cache(small.n_blocks() * 4 * entry);
  for (int64_t i = 0; i < n_keys; ++i)
    std::copy_n(s.cache.begin() + seq.slots[keys[i]] * entry, entry,
                cache.begin() + small.slots[i] * entry);
  std::vector<float> q(n_keys * p.n_heads * qk, 0.0f);
  std::copy_n(s.q.begin() + last * p.n_heads * qk, p.n_heads * qk,
              q.begin() + (n_keys - 1) * p.n_heads * qk);
  std::vector<float> dense(n_keys * p.n_heads * p.v_dim);
  backend->mla_attention(f32(q, {n_keys, p.n_heads, qk}),
                         f32(cache, {small.n_blocks(), 4, 1, entry}),
                         f32(s.kv_b, {p.n_heads * (p.nope_dim + p.v_dim), p.latent_dim}),
                         small.meta, p, f32(dense, {n_keys, p.n_heads, p.v_dim}));
  const auto [error, max_ref] =
      max_relative_error(dense.data() + (n_keys - 1) * p.n_heads * p.v_dim,
                         sparse.data() + last * p.n_heads * p.v_dim, p.n_heads * p.v_dim);
  ASSERT_GT(max_ref, 0.1);
  EXPECT_LE(error, 1e-6);
}

// A backend without the ops (Backend's defaults, as CUDA has today) refuses up front, naming
// itself and the way out.
TEST(SparseAttentionReference, BackendsWithoutTheOpsRefuse) {
  IndexerParams p;
  p.n_heads = 64, p.head_dim = 128, p.rope_dim = 64, p.top_k = 2048;
  auto backend = make_cpu_backend();
  try {
    backend->Backend::check_sparse_attention(p);
    FAIL() << "no refusal";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("the cpu backend does not run DeepSeek sparse attention"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("--device cpu"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace hadron
