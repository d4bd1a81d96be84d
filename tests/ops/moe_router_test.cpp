// CUDA vs CPU: moe_router, the router's product and the routing in one op (fused into one
// kernel on CUDA up to kMoeRouterMaxTokens tokens, the GEMM then the routing kernel above).
// Checked in two parts so that near-ties between random logits cannot make it flaky:
//  - the logits the op leaves behind equal the CPU's product of the same bf16 inputs;
//  - the ids and weights equal those of moe_route (checked against the CPU reference on
//    separated logits in moe_test.cpp) run on the GPU over those same logits, bit for bit.
// Each case runs twice with fresh inputs: the fused kernel's block counter must come back to
// zero, or the second run's routing would never happen.
#include <algorithm>
#include <cmath>

#include "op_test_util.h"

namespace hadron::test {
namespace {

struct RouterCase {
  int64_t n_tokens, n_experts, hidden, top_k;
  MoeScoring scoring;
  bool normalize, correction, router_bias;
  int64_t n_group, topk_group;
  float scaling;
  bool duplicate_rows = false;  // router rows e and e + E / 2 equal: every logit tied in pairs
};

class MoeRouterTest : public OpTest {
 protected:
  void check(const RouterCase& c);
};

void MoeRouterTest::check(const RouterCase& c) {
  const int64_t T = c.n_tokens, E = c.n_experts, H = c.hidden, k = c.top_k;
  const MoeRoutingParams params{c.scoring, k, c.normalize, c.n_group, c.topk_group, c.scaling};
  std::vector<float> router = random_floats(E * H, 2.0f / std::sqrt(static_cast<float>(H)));
  if (c.duplicate_rows)
    std::copy(router.begin(), router.begin() + E / 2 * H, router.begin() + E / 2 * H);
  std::vector<float> bias = random_floats(E, 0.5f), correction = random_floats(E, 0.05f);
  DeviceTensor router_gpu = upload(router, {E, H});
  DeviceTensor bias_gpu, correction_gpu;
  if (c.router_bias) bias_gpu = upload(bias, {E}, DType::F32);
  if (c.correction) correction_gpu = upload(correction, {E}, DType::F32);
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(testing::Message() << "run " << run);
    std::vector<float> x = random_floats(T * H);
    DeviceTensor x_gpu = upload(x, {T, H});
    DeviceTensor logits_gpu = poisoned({T, E}, DType::F32);
    DeviceTensor ids_gpu = upload_i32(std::vector<int32_t>(T * k, -7), {T, k});
    DeviceTensor weights_gpu = poisoned({T, k}, DType::F32);
    gpu_->moe_router(x_gpu.tensor, router_gpu.tensor, bias_gpu.tensor, correction_gpu.tensor,
                     params, logits_gpu.tensor, ids_gpu.tensor, weights_gpu.tensor);

    std::vector<float> expected(T * E);
    cpu_->linear(host_view(x, {T, H}), host_view(router, {E, H}),
                 c.router_bias ? host_view(bias, {E}) : Tensor{}, host_view(expected, {T, E}));
    std::vector<float> logits = download(logits_gpu.tensor);
    EXPECT_CLOSE(logits, expected, 1e-5);

    DeviceTensor again_logits = upload(logits, {T, E}, DType::F32);
    DeviceTensor again_ids = upload_i32(std::vector<int32_t>(T * k, -7), {T, k});
    DeviceTensor again_weights = poisoned({T, k}, DType::F32);
    gpu_->moe_route(again_logits.tensor, correction_gpu.tensor, params, again_ids.tensor,
                    again_weights.tensor);
    const std::vector<int32_t> ids = download_i32(ids_gpu.tensor);
    EXPECT_EQ(ids, download_i32(again_ids.tensor));
    EXPECT_EQ(download(weights_gpu.tensor), download(again_weights.tensor));
    if (c.duplicate_rows) {  // the picks come in tied pairs, the lower expert first
      for (int64_t i = 0; i + 1 < T * k; i += 2) {
        EXPECT_LT(ids[i], E / 2) << "pick " << i;
        EXPECT_EQ(ids[i + 1], ids[i] + E / 2) << "pick " << i + 1;
      }
    }
  }
}

TEST_F(MoeRouterTest, MatchesProductThenRoute) {
  const RouterCase cases[] = {
      // T, E, H, k, scoring, normalize, correction, router bias, groups, kept, scaling
      {1, 128, 2048, 8, MoeScoring::kSoftmax, true, false, false, 1, 1, 1.0f},  // Qwen3-30B-A3B
      {4, 32, 2880, 4, MoeScoring::kSoftmax, true, false, true, 1, 1, 1.0f},    // gpt-oss-20b
      {8, 8, 4096, 2, MoeScoring::kSoftmax, true, false, false, 1, 1, 1.0f},    // Mixtral
      {3, 160, 5120, 8, MoeScoring::kSigmoid, true, true, false, 1, 1, 2.5f},   // GLM-4.5
      {2, 256, 7168, 8, MoeScoring::kSigmoid, true, true, false, 8, 4, 2.5f},   // DeepSeek-V3
      {5, 12, 72, 3, MoeScoring::kSigmoid, false, true, true, 4, 2, 1.0f},      // awkward
      {9, 128, 2048, 8, MoeScoring::kSoftmax, true, false, false, 1, 1, 1.0f},  // GEMM path
      {2, 16, 104, 2, MoeScoring::kSoftmax, false, false, true, 1, 1, 1.0f},    // 13 vectors
      {1, 128, 2048, 8, MoeScoring::kSoftmax, true, false, false, 1, 1, 1.0f, true},  // ties
      {4, 32, 2880, 4, MoeScoring::kSoftmax, true, false, false, 1, 1, 1.0f, true}};
  for (const RouterCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "T " << c.n_tokens << " E " << c.n_experts << " H "
                                    << c.hidden << " k " << c.top_k);
    check(c);
  }
}

// A hidden size the kernels cannot take (not a multiple of 8) is a clear error, not a crash.
TEST_F(MoeRouterTest, RejectsHiddenSizesItCannotTake) {
  std::vector<float> x = random_floats(2 * 100), router = random_floats(16 * 100);
  DeviceTensor x_gpu = upload(x, {2, 100}), router_gpu = upload(router, {16, 100});
  DeviceTensor logits = poisoned({2, 16}, DType::F32), weights = poisoned({2, 2}, DType::F32);
  DeviceTensor ids = upload_i32(std::vector<int32_t>(4, -7), {2, 2});
  const MoeRoutingParams params{MoeScoring::kSoftmax, 2};
  EXPECT_THROW(gpu_->moe_router(x_gpu.tensor, router_gpu.tensor, Tensor{}, Tensor{}, params,
                                logits.tensor, ids.tensor, weights.tensor),
               std::exception);
}

}  // namespace
}  // namespace hadron::test
