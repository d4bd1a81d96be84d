// The CPU gated DeltaNet ops (backends/cpu/linear_attention.cpp) against their definitions in
// ops/backend.h on fresh random inputs: the convolution as a plain causal sum, the delta rule
// in its matrix form S = exp(g) (I - beta k k^T) S + beta k v^T (a different grouping of the
// same recurrence), recomputed in double. Both carry state across calls: a batch of two
// sequences, one split over two steps, equals each sequence in one step. Runs without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ops/backend.h"
#include "reference_util.h"

namespace hadron {
namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// BatchMeta of sequences given as (slot, first position, n tokens).
struct MetaStorage {
  std::vector<int32_t> positions, cu_seqlens{0}, slots;
  BatchMeta meta;

  MetaStorage(std::initializer_list<std::array<int32_t, 3>> seqs) {
    for (const auto& [slot, first, n] : seqs) {
      for (int32_t i = 0; i < n; ++i) positions.push_back(first + i);
      cu_seqlens.push_back(cu_seqlens.back() + n);
      slots.push_back(slot);
    }
    meta.n_seqs = static_cast<int>(slots.size());
    meta.n_tokens = cu_seqlens.back();
    const auto n_seqs = static_cast<int64_t>(slots.size());
    meta.positions = Tensor::view_of(positions.data(), DType::I32, {meta.n_tokens});
    meta.cu_seqlens_q = Tensor::view_of(cu_seqlens.data(), DType::I32, {n_seqs + 1});
    meta.state_slots = Tensor::view_of(slots.data(), DType::I32, {n_seqs});
  }
};

TEST(LinearAttentionReference, CausalConvIsACausalSumAndCarriesItsState) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t T = 11, C = 6, K = 4, split = 5;
  std::vector<float> x = normal_floats(rng, 2 * T * C, 1.0f), w = normal_floats(rng, C * K, 0.5f);
  std::vector<float> states(3 * C * (K - 1), 7.0f), out(2 * T * C);  // stale: must be reset
  const auto cpu = make_cpu_backend();
  // Sequence 0 in slot 2 (all its tokens), sequence 1 in slot 0 (its first `split`) ...
  const MetaStorage first({{2, 0, T}, {0, 0, split}});
  cpu->causal_conv1d(view(x, {T + split, C}), view(w, {C, K}), view(states, {3, C, K - 1}),
                     first.meta, view(out, {T + split, C}));
  // ... then the rest of sequence 1, from its state.
  std::vector<float> rest(x.begin() + (T + split) * C, x.begin() + 2 * T * C);
  const MetaStorage second({{0, split, T - split}});
  cpu->causal_conv1d(view(rest, {T - split, C}), view(w, {C, K}), view(states, {3, C, K - 1}),
                     second.meta,
                     Tensor::view_of(out.data() + (T + split) * C, DType::F32, {T - split, C}));
  for (int64_t seq = 0; seq < 2; ++seq) {
    const int64_t row0 = seq == 0 ? 0 : T;  // sequence 1's rows are T..2T-1 in x and out
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < K; ++j) {
          const int64_t src = t - (K - 1) + j;
          if (src >= 0) acc += double{w[c * K + j]} * x[(row0 + src) * C + c];
        }
        EXPECT_NEAR(out[(row0 + t) * C + c], acc * sigmoid(acc), 1e-5)
            << "sequence " << seq << " token " << t << " channel " << c;
      }
  }
}

TEST(LinearAttentionReference, GatedDeltaRuleFollowsItsMatrixForm) {
  std::mt19937_64 rng(std::random_device{}());
  const LinearAttentionParams p{2, 4, 8, 6, 4};
  const int64_t T = 9, split = 4, hv = p.n_value_heads, dk = p.key_head_dim, dv = p.value_head_dim;
  std::vector<float> qkv = normal_floats(rng, T * p.conv_dim(), 1.0f);
  std::vector<float> ba = normal_floats(rng, T * 2 * hv, 1.0f);
  std::vector<float> a_log = normal_floats(rng, hv, 0.5f), dt_bias = normal_floats(rng, hv, 0.5f);
  std::vector<float> states(2 * hv * dk * dv, 3.0f), out(T * hv * dv);  // stale: must be reset
  const auto cpu = make_cpu_backend();
  const Tensor state_view = view(states, {2, hv, dk, dv});
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, split}, {split, T}}) {
    const MetaStorage meta({{1, static_cast<int32_t>(begin), static_cast<int32_t>(end - begin)}});
    cpu->gated_delta_rule(
        Tensor::view_of(qkv.data() + begin * p.conv_dim(), DType::F32, {end - begin, p.conv_dim()}),
        Tensor::view_of(ba.data() + begin * 2 * hv, DType::F32, {end - begin, 2 * hv}),
        view(a_log, {hv}), view(dt_bias, {hv}), state_view, meta.meta, p,
        Tensor::view_of(out.data() + begin * hv * dv, DType::F32, {end - begin, hv, dv}));
  }
  for (int64_t h = 0; h < hv; ++h) {
    const int64_t kh = h / (hv / p.n_key_heads);
    std::vector<double> s(dk * dv, 0.0);
    for (int64_t t = 0; t < T; ++t) {
      const float* row = qkv.data() + t * p.conv_dim();
      std::vector<double> q(row + kh * dk, row + (kh + 1) * dk);
      std::vector<double> k(row + p.key_dim() + kh * dk, row + p.key_dim() + (kh + 1) * dk);
      const float* v = row + 2 * p.key_dim() + h * dv;
      double qq = 0, kk = 0;
      for (int64_t i = 0; i < dk; ++i) qq += q[i] * q[i], kk += k[i] * k[i];
      for (int64_t i = 0; i < dk; ++i) {
        q[i] /= std::sqrt(qq + 1e-6) * std::sqrt(static_cast<double>(dk));
        k[i] /= std::sqrt(kk + 1e-6);
      }
      const double beta = sigmoid(ba[t * 2 * hv + h]);
      const double a = ba[t * 2 * hv + hv + h] + dt_bias[h];
      const double decay = std::exp(-std::exp(double{a_log[h]}) * std::log1p(std::exp(a)));
      // S = decay (I - beta k k^T) S + beta k v^T
      std::vector<double> kts(dv, 0.0), next(dk * dv);
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) kts[j] += k[i] * s[i * dv + j];
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j)
          next[i * dv + j] = decay * (s[i * dv + j] - beta * k[i] * kts[j]) + beta * k[i] * v[j];
      s = next;
      for (int64_t j = 0; j < dv; ++j) {
        double o = 0;
        for (int64_t i = 0; i < dk; ++i) o += s[i * dv + j] * q[i];
        EXPECT_NEAR(out[(t * hv + h) * dv + j], o, 1e-4) << "token " << t << " head " << h;
      }
    }
  }
}

TEST(LinearAttentionReference, GatedNormAndSigmoidGate) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t R = 5, D = 12;
  std::vector<float> x = normal_floats(rng, R * D, 1.0f), gate = normal_floats(rng, R * D, 1.0f);
  std::vector<float> w = normal_floats(rng, D, 1.0f), row_gate = normal_floats(rng, R, 1.0f);
  std::vector<float> normed(R * D), gated(R * D);
  const auto cpu = make_cpu_backend();
  cpu->rms_norm_gated(view(x, {R, D}), view(gate, {R, D}), view(w, {D}), 1e-6f,
                      view(normed, {R, D}));
  cpu->sigmoid_mul(view(x, {R, D}), view(row_gate, {R, 1}), view(gated, {R, D}));
  for (int64_t r = 0; r < R; ++r) {
    double squares = 0;
    for (int64_t i = 0; i < D; ++i) squares += double{x[r * D + i]} * x[r * D + i];
    const double inv_rms = 1 / std::sqrt(squares / D + 1e-6);
    for (int64_t i = 0; i < D; ++i) {
      const double z = gate[r * D + i];
      EXPECT_NEAR(normed[r * D + i], x[r * D + i] * inv_rms * w[i] * z * sigmoid(z), 1e-5);
      EXPECT_NEAR(gated[r * D + i], x[r * D + i] * sigmoid(row_gate[r]), 1e-6);
    }
  }
}

}  // namespace
}  // namespace hadron
