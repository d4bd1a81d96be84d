// The tensor-core grouped expert GEMMs (moe_grouped_gemm.cu) against plain host loops, on a
// workspace built on the host: random routing, pairs sorted by expert, shapes that are not
// multiples of the 64 x 128 x 64 tiles (partial row tiles, partial K steps, partial column
// tiles), both activations, biases. The whole MoE op (routing order, combine) is covered by
// moe_test.cpp through Backend::moe_experts.
#include "backends/cuda/moe_grouped_gemm.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_test_util.h"

namespace hadron::test {
namespace {

struct GroupedCase {
  int64_t n_tokens, n_experts, top_k, hidden, inter;
  bool interleaved_clamped, biases;
};

class MoeGroupedGemmTest : public OpTest {
 protected:
  void check(const GroupedCase& c);
};

float activate(bool clamped, float gate, float up) {
  constexpr float kLimit = 7.0f, kAlpha = 1.702f;
  if (!clamped) return gate / (1.0f + std::exp(-gate)) * up;
  gate = std::min(gate, kLimit);
  up = std::clamp(up, -kLimit, kLimit);
  return (up + 1.0f) * gate / (1.0f + std::exp(-kAlpha * gate));
}

void MoeGroupedGemmTest::check(const GroupedCase& c) {
  SCOPED_TRACE(testing::Message() << "T " << c.n_tokens << " E " << c.n_experts << " k " << c.top_k
                                  << " H " << c.hidden << " I " << c.inter
                                  << (c.interleaved_clamped ? " clamped" : " swiglu"));
  const int64_t T = c.n_tokens, E = c.n_experts, k = c.top_k, H = c.hidden, I = c.inter;
  const int64_t n_pairs = T * k;
  // Routing: k distinct experts per token in random order.
  std::vector<int32_t> ids(n_pairs);
  std::vector<int32_t> experts(E);
  std::iota(experts.begin(), experts.end(), 0);
  for (int64_t t = 0; t < T; ++t) {
    std::shuffle(experts.begin(), experts.end(), rng_);
    std::copy_n(experts.begin(), k, ids.begin() + t * k);
  }
  // The workspace moe_align_kernel would build: offsets, active experts, sorted pairs.
  std::vector<int32_t> offsets(E + 1, 0), active(E + 1, 0), sorted(n_pairs), pair_rows(n_pairs);
  for (int32_t id : ids) ++offsets[id + 1];
  for (int64_t e = 0; e < E; ++e) offsets[e + 1] += offsets[e];
  int32_t n_active = 0;
  for (int64_t e = 0; e < E; ++e)
    if (offsets[e + 1] > offsets[e]) active[n_active++] = static_cast<int32_t>(e);
  active[E] = n_active;
  std::vector<int32_t> cursor(offsets.begin(), offsets.end() - 1);
  for (int64_t p = 0; p < n_pairs; ++p) {
    sorted[cursor[ids[p]]] = static_cast<int32_t>(p);
    pair_rows[p] = cursor[ids[p]]++;
  }

  std::vector<float> x = random_floats(T * H);
  std::vector<float> gate_up = random_floats(E * 2 * I * H, 1.0f / std::sqrt(float(H)));
  std::vector<float> down = random_floats(E * H * I, 1.0f / std::sqrt(float(I)));
  std::vector<float> gate_up_bias = random_floats(E * 2 * I, 0.1f);
  std::vector<float> down_bias = random_floats(E * H, 0.1f);
  DeviceTensor x_gpu = upload(x, {T, H}), gu_gpu = upload(gate_up, {E, 2 * I, H});
  DeviceTensor down_gpu = upload(down, {E, H, I});
  DeviceTensor gub_gpu = upload(gate_up_bias, {E, 2 * I}), db_gpu = upload(down_bias, {E, H});
  DeviceTensor offsets_gpu = upload_i32(offsets, {E + 1}), active_gpu = upload_i32(active, {E + 1});
  DeviceTensor sorted_gpu = upload_i32(sorted, {n_pairs}),
               rows_gpu = upload_i32(pair_rows, {n_pairs});
  DeviceTensor activated = poisoned({n_pairs, I}), expert_out = poisoned({n_pairs, H});

  cuda::MoeExpertsArgs args{};
  args.x = x_gpu.tensor.data;
  args.gate_up = gu_gpu.tensor.data;
  args.down = down_gpu.tensor.data;
  args.gate_up_bias = c.biases ? gub_gpu.tensor.data : nullptr;
  args.down_bias = c.biases ? db_gpu.tensor.data : nullptr;
  args.n_tokens = T;
  args.hidden = H;
  args.inter = I;
  args.n_experts = static_cast<int>(E);
  args.top_k = static_cast<int>(k);
  args.interleaved_clamped = c.interleaved_clamped;
  args.swiglu_limit = 7.0f;
  args.swiglu_alpha = 1.702f;
  cuda::MoeWorkspace workspace{};
  workspace.offsets = static_cast<int32_t*>(offsets_gpu.tensor.data);
  workspace.active = static_cast<int32_t*>(active_gpu.tensor.data);
  workspace.sorted_pairs = static_cast<int32_t*>(sorted_gpu.tensor.data);
  workspace.pair_rows = static_cast<int32_t*>(rows_gpu.tensor.data);
  workspace.activated = activated.tensor.data;
  workspace.expert_out = expert_out.tensor.data;
  cuda::launch_moe_gate_up_mma(args, workspace, nullptr);
  cuda::launch_moe_down_mma(args, workspace, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  // gate_up + activation, per sorted row.
  std::vector<float> expected_act(n_pairs * I);
  for (int64_t r = 0; r < n_pairs; ++r) {
    const int64_t t = sorted[r] / k, e = ids[sorted[r]];
    for (int64_t i = 0; i < I; ++i) {
      const int64_t g_row = c.interleaved_clamped ? 2 * i : i;
      const int64_t u_row = c.interleaved_clamped ? 2 * i + 1 : I + i;
      double g = 0, u = 0;
      for (int64_t h = 0; h < H; ++h) {
        g += double(x[t * H + h]) * gate_up[(e * 2 * I + g_row) * H + h];
        u += double(x[t * H + h]) * gate_up[(e * 2 * I + u_row) * H + h];
      }
      if (c.biases) {
        g += gate_up_bias[e * 2 * I + g_row];
        u += gate_up_bias[e * 2 * I + u_row];
      }
      expected_act[r * I + i] = activate(c.interleaved_clamped, float(g), float(u));
    }
  }
  std::vector<float> got_act = download(activated.tensor);
  EXPECT_CLOSE(got_act, expected_act, kGemmTol);
  // down, from the GPU's own bf16 activations (so rounding does not compound).
  std::vector<float> expected_out(n_pairs * H);
  for (int64_t r = 0; r < n_pairs; ++r) {
    const int64_t e = ids[sorted[r]];
    for (int64_t h = 0; h < H; ++h) {
      double s = c.biases ? down_bias[e * H + h] : 0.0;
      for (int64_t i = 0; i < I; ++i) s += double(got_act[r * I + i]) * down[(e * H + h) * I + i];
      expected_out[r * H + h] = float(s);
    }
  }
  EXPECT_CLOSE(download(expert_out.tensor), expected_out, kGemmTol);
}

TEST_F(MoeGroupedGemmTest, MatchesHostLoops) {
  const GroupedCase cases[] = {
      {256, 16, 8, 512, 192, false, false},  // ~128 rows per expert: several row tiles
      {300, 8, 2, 136, 40, false, true},     // K 136 (partial K step), I 40 (partial tile)
      {70, 128, 8, 256, 96, false, false},   // many experts, few rows each, some unused
      {96, 8, 4, 192, 200, true, true},      // gpt-oss's interleaved clamped activation
      {1, 4, 2, 64, 64, false, true}};       // one token
  for (const GroupedCase& c : cases) check(c);
}

}  // namespace
}  // namespace hadron::test
