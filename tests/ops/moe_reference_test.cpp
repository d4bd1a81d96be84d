// The CPU MoE references (backends/cpu/moe_*.cpp) against their definitions in ops/moe.h:
// routing picks checked as properties (kept groups, top-k order, weights), the expert sum
// recomputed one (token, slot) pair at a time with plain loops. Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ops/backend.h"
#include "reference_util.h"

namespace hadron {
namespace {

// The reference computes in float, this test in double: comparisons allow that much.
constexpr double kFloatSlack = 1e-6;

TEST(MoeReference, GroupedSigmoidRoutingFollowsItsDefinition) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t T = 50, E = 16, k = 3;
  const MoeRoutingParams params{MoeScoring::kSigmoid, k, true, 4, 2, 2.5f};
  std::vector<float> logits = normal_floats(rng, T * E, 2.0f), bias = normal_floats(rng, E, 0.1f);
  std::vector<int32_t> ids(T * k);
  std::vector<float> weights(T * k);
  make_cpu_backend()->moe_route(view(logits, {T, E}), view(bias, {E}), params,
                                Tensor::view_of(ids.data(), DType::I32, {T, k}),
                                view(weights, {T, k}));
  const int64_t group_size = E / params.n_group;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> score(E), choice(E), group(params.n_group);
    for (int64_t e = 0; e < E; ++e) {
      score[e] = 1.0 / (1.0 + std::exp(-double{logits[t * E + e]}));
      choice[e] = score[e] + bias[e];
    }
    for (int64_t g = 0; g < params.n_group; ++g) {
      std::vector<double> members(choice.begin() + g * group_size,
                                  choice.begin() + (g + 1) * group_size);
      std::sort(members.rbegin(), members.rend());
      group[g] = members[0] + members[1];
    }
    std::vector<double> sorted_groups = group;
    std::sort(sorted_groups.rbegin(), sorted_groups.rend());
    const double kept_threshold = sorted_groups[params.topk_group - 1];
    double picked_sum = 0, weight_sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = ids[t * k + j];
      EXPECT_GE(group[e / group_size], kept_threshold - kFloatSlack)
          << "token " << t << " expert " << e;
      if (j > 0) {
        EXPECT_LE(choice[e], choice[ids[t * k + j - 1]] + kFloatSlack)
            << "picks by decreasing choice";
      }
      picked_sum += score[e];
      weight_sum += weights[t * k + j];
    }
    for (int64_t j = 0; j < k; ++j)
      EXPECT_NEAR(weights[t * k + j], score[ids[t * k + j]] / picked_sum * 2.5, 1e-5);
    EXPECT_NEAR(weight_sum, 2.5, 1e-5);
    // No eligible expert left out beats the last pick.
    for (int64_t e = 0; e < E; ++e) {
      const bool picked = std::count(ids.begin() + t * k, ids.begin() + (t + 1) * k, e) > 0;
      if (!picked && group[e / group_size] >= kept_threshold + kFloatSlack) {
        EXPECT_LE(choice[e], choice[ids[t * k + k - 1]] + kFloatSlack)
            << "token " << t << " expert " << e;
      }
    }
  }
}

// One pair's expert output, from the definition: down(act(gate_up x + b1)) + b2.
std::vector<double> expert_output(const std::vector<float>& x, const std::vector<float>& gate_up,
                                  const std::vector<float>& gate_up_bias,
                                  const std::vector<float>& down,
                                  const std::vector<float>& down_bias, int64_t e, int64_t H,
                                  int64_t I, bool interleaved) {
  std::vector<double> projected(2 * I), activated(I), out(H);
  for (int64_t r = 0; r < 2 * I; ++r) {
    projected[r] = gate_up_bias[e * 2 * I + r];
    for (int64_t h = 0; h < H; ++h) projected[r] += double{gate_up[(e * 2 * I + r) * H + h]} * x[h];
  }
  for (int64_t i = 0; i < I; ++i) {
    if (interleaved) {
      const double gate = std::min(projected[2 * i], 7.0);
      const double up = std::clamp(projected[2 * i + 1], -7.0, 7.0);
      activated[i] = (up + 1) * gate / (1 + std::exp(-1.702 * gate));
    } else {
      activated[i] = projected[i] / (1 + std::exp(-projected[i])) * projected[I + i];
    }
  }
  for (int64_t h = 0; h < H; ++h) {
    out[h] = down_bias[e * H + h];
    for (int64_t i = 0; i < I; ++i) out[h] += double{down[(e * H + h) * I + i]} * activated[i];
  }
  return out;
}

TEST(MoeReference, ExpertSumFollowsItsDefinition) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t T = 7, E = 6, k = 2, H = 24, I = 16;
  for (const bool interleaved : {false, true}) {
    std::vector<float> x = normal_floats(rng, T * H, 1.0f);
    std::vector<float> gate_up = normal_floats(rng, E * 2 * I * H, 0.3f);
    std::vector<float> down = normal_floats(rng, E * H * I, 0.3f);
    std::vector<float> gate_up_bias = normal_floats(rng, E * 2 * I, 0.1f);
    std::vector<float> down_bias = normal_floats(rng, E * H, 0.1f);
    std::vector<float> weights = normal_floats(rng, T * k, 1.0f);
    std::vector<int32_t> ids(T * k);
    for (int32_t& id : ids) id = static_cast<int32_t>(rng() % E);  // repeats allowed
    std::vector<float> out = normal_floats(rng, T * H, 1.0f);
    const std::vector<float> before = out;
    const MoeExpertParams params{
        interleaved ? MoeActivation::kClampedSwiGluInterleaved : MoeActivation::kSwiGlu, 7.0f,
        1.702f, true};
    make_cpu_backend()->moe_experts(
        view(x, {T, H}), Tensor::view_of(ids.data(), DType::I32, {T, k}), view(weights, {T, k}),
        {view(gate_up, {E, 2 * I, H}), view(gate_up_bias, {E, 2 * I}), view(down, {E, H, I}),
         view(down_bias, {E, H})},
        params, Tensor{}, view(out, {T, H}));
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> expected(before.begin() + t * H, before.begin() + (t + 1) * H);
      const std::vector<float> row(x.begin() + t * H, x.begin() + (t + 1) * H);
      for (int64_t j = 0; j < k; ++j) {
        const std::vector<double> y = expert_output(row, gate_up, gate_up_bias, down, down_bias,
                                                    ids[t * k + j], H, I, interleaved);
        for (int64_t h = 0; h < H; ++h) expected[h] += weights[t * k + j] * y[h];
      }
      for (int64_t h = 0; h < H; ++h)
        EXPECT_NEAR(out[t * H + h], expected[h], 1e-4 * (1 + std::abs(expected[h])))
            << "token " << t << " column " << h << (interleaved ? " (interleaved)" : "");
    }
  }
}

// Expert parallelism: each of 3 "ranks" holds 2 of the 6 experts (first_expert) and
// accumulates only the tokens routed to them; the ranks' outputs sum to the expert sum of all 6.
TEST(MoeReference, ExpertRangesSumToAllExperts) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t T = 9, E = 6, k = 2, H = 16, I = 8, kRanks = 3, local = E / kRanks;
  std::vector<float> x = normal_floats(rng, T * H, 1.0f);
  std::vector<float> gate_up = normal_floats(rng, E * 2 * I * H, 0.3f);
  std::vector<float> down = normal_floats(rng, E * H * I, 0.3f);
  std::vector<float> weights = normal_floats(rng, T * k, 1.0f);
  std::vector<int32_t> ids(T * k);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng() % E);
  const Tensor ids_view = Tensor::view_of(ids.data(), DType::I32, {T, k});
  std::vector<float> all(T * H), summed(T * H, 0.0f);
  make_cpu_backend()->moe_experts(
      view(x, {T, H}), ids_view, view(weights, {T, k}),
      {view(gate_up, {E, 2 * I, H}), Tensor{}, view(down, {E, H, I}), Tensor{}}, MoeExpertParams{},
      Tensor{}, view(all, {T, H}));
  for (int64_t r = 0; r < kRanks; ++r) {
    MoeExpertParams params;
    params.accumulate = true;
    params.first_expert = r * local;
    params.n_total_experts = E;
    make_cpu_backend()->moe_experts(
        view(x, {T, H}), ids_view, view(weights, {T, k}),
        {Tensor::view_of(gate_up.data() + r * local * 2 * I * H, DType::F32, {local, 2 * I, H}),
         Tensor{}, Tensor::view_of(down.data() + r * local * H * I, DType::F32, {local, H, I}),
         Tensor{}},
        params, Tensor{}, view(summed, {T, H}));
  }
  for (int64_t i = 0; i < T * H; ++i)
    EXPECT_NEAR(summed[i], all[i], 1e-5 * (1 + std::abs(all[i]))) << "element " << i;
}

}  // namespace
}  // namespace hadron
