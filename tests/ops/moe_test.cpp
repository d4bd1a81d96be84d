// CUDA vs CPU: MoE routing (softmax, sigmoid with score correction, grouped top-k) and the
// expert computation (bf16 and MXFP4 weights, SwiGLU and gpt-oss's clamped interleaved
// variant, biases, accumulate; the small-batch and the sorted path) at real (Qwen3-30B-A3B,
// GLM-4.5, gpt-oss) and awkward shapes.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_test_util.h"

namespace hadron::test {
namespace {

class MoeTest : public OpTest {
 protected:
  // Selection values c[t, e] that are far apart (no near-ties between experts, nor between
  // groups' best-two sums): group g of each token gets its own level, experts a spread
  // within it, both in random order.
  std::vector<float> separated_choices(int64_t n_tokens, int64_t n_experts, int64_t n_group) {
    const int64_t group_size = n_experts / n_group;
    const float level = 0.8f / static_cast<float>(n_group);
    std::vector<float> choice(n_tokens * n_experts);
    std::vector<int64_t> group_rank(n_group), member_rank(group_size);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::iota(group_rank.begin(), group_rank.end(), 0);
      std::shuffle(group_rank.begin(), group_rank.end(), rng_);
      for (int64_t g = 0; g < n_group; ++g) {
        std::iota(member_rank.begin(), member_rank.end(), 0);
        std::shuffle(member_rank.begin(), member_rank.end(), rng_);
        for (int64_t m = 0; m < group_size; ++m)
          choice[t * n_experts + g * group_size + m] =
              0.1f + level * (group_rank[g] + 0.25f * member_rank[m] / group_size);
      }
    }
    return choice;
  }
};

struct RouteCase {
  int64_t n_tokens, n_experts, top_k;
  MoeScoring scoring;
  bool normalize, correction;
  int64_t n_group, topk_group;
  float scaling;
};

TEST_F(MoeTest, RouteMatchesCpu) {
  const RouteCase cases[] = {
      {1, 128, 8, MoeScoring::kSoftmax, true, false, 1, 1, 1.0f},    // Qwen3-30B-A3B
      {37, 8, 2, MoeScoring::kSoftmax, true, false, 1, 1, 1.0f},     // Mixtral
      {300, 32, 4, MoeScoring::kSoftmax, false, false, 1, 1, 1.0f},  // gpt-oss size
      {5, 160, 8, MoeScoring::kSigmoid, true, true, 1, 1, 2.5f},     // GLM-4.5
      {64, 256, 8, MoeScoring::kSigmoid, true, true, 8, 4, 2.5f},    // DeepSeek-V3 groups
      {3, 12, 3, MoeScoring::kSigmoid, false, true, 4, 2, 1.0f}};
  for (const RouteCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "T " << c.n_tokens << " E " << c.n_experts << " k "
                                    << c.top_k << " groups " << c.n_group);
    const int64_t n = c.n_tokens * c.n_experts;
    std::vector<float> logits(n), bias;
    if (c.scoring == MoeScoring::kSoftmax) {
      // Distinct logits 0.05 apart in random order.
      std::vector<int64_t> rank(c.n_experts);
      for (int64_t t = 0; t < c.n_tokens; ++t) {
        std::iota(rank.begin(), rank.end(), 0);
        std::shuffle(rank.begin(), rank.end(), rng_);
        for (int64_t e = 0; e < c.n_experts; ++e)
          logits[t * c.n_experts + e] = 0.05f * static_cast<float>(rank[e]) - 2.0f;
      }
    } else {
      // logit = sigmoid^-1(choice - bias), so scores + bias give the separated choices.
      const std::vector<float> choice = separated_choices(c.n_tokens, c.n_experts, c.n_group);
      bias = c.correction ? random_floats(c.n_experts, 0.03f) : std::vector<float>{};
      for (float& b : bias) b = std::clamp(b, -0.09f, 0.09f);
      for (int64_t i = 0; i < n; ++i) {
        const float score = choice[i] - (bias.empty() ? 0.0f : bias[i % c.n_experts]);
        logits[i] = std::log(score / (1.0f - score));
      }
    }
    const MoeRoutingParams params{c.scoring, c.top_k,      c.normalize,
                                  c.n_group, c.topk_group, c.scaling};
    DeviceTensor logits_gpu = upload(logits, {c.n_tokens, c.n_experts}, DType::F32);
    DeviceTensor bias_gpu;
    if (!bias.empty()) bias_gpu = upload(bias, {c.n_experts}, DType::F32);
    DeviceTensor ids_gpu =
        upload_i32(std::vector<int32_t>(c.n_tokens * c.top_k, -7), {c.n_tokens, c.top_k});
    DeviceTensor weights_gpu = poisoned({c.n_tokens, c.top_k}, DType::F32);
    gpu_->moe_route(logits_gpu.tensor, bias_gpu.tensor, params, ids_gpu.tensor, weights_gpu.tensor);
    std::vector<int32_t> ids(c.n_tokens * c.top_k);
    std::vector<float> weights(c.n_tokens * c.top_k);
    cpu_->moe_route(host_view(logits, {c.n_tokens, c.n_experts}),
                    bias.empty() ? Tensor{} : host_view(bias, {c.n_experts}), params,
                    host_view_i32(ids, {c.n_tokens, c.top_k}),
                    host_view(weights, {c.n_tokens, c.top_k}));
    // Both list the picks by decreasing choice, so ids compare element by element.
    EXPECT_EQ(download_i32(ids_gpu.tensor), ids);
    EXPECT_CLOSE(download(weights_gpu.tensor), weights, 1e-5);
  }
}

struct ExpertsCase {
  int64_t n_tokens, n_experts, top_k, hidden, inter;
  MoeActivation activation;
  bool biases, accumulate;
};

// Random MXFP4 weights: random codes, scales 2^(scale_lo_ - 127)..2^(scale_hi_ - 127)
// (2^-11..2^-5 unless a test widens them) with some 2^-127 (scale byte 0).
struct Mxfp4Weights {
  std::vector<uint8_t> blocks, scales;
};

class MoeExpertsTest : public MoeTest {
 protected:
  Mxfp4Weights random_mxfp4(int64_t n_rows, int64_t cols) {
    Mxfp4Weights w{std::vector<uint8_t>(n_rows * cols / 2),
                   std::vector<uint8_t>(n_rows * cols / 32)};
    std::uniform_int_distribution<int> byte(0, 255), scale(scale_lo_, scale_hi_), rare(0, 63);
    for (uint8_t& b : w.blocks) b = static_cast<uint8_t>(byte(rng_));
    for (uint8_t& s : w.scales) s = static_cast<uint8_t>(rare(rng_) == 0 ? 0 : scale(rng_));
    return w;
  }
  DeviceTensor upload_u8(const std::vector<uint8_t>& bytes, std::vector<int64_t> shape) {
    DeviceTensor result;
    result.buffer = gpu_->allocate(bytes.size());
    result.tensor = Tensor::view_of(result.buffer.data(), DType::U8, shape, Device::CUDA);
    gpu_->copy(Tensor::view_of(const_cast<uint8_t*>(bytes.data()), DType::U8, shape),
               result.tensor);
    return result;
  }
  // k distinct experts per token, in random order.
  std::vector<int32_t> random_ids(int64_t n_tokens, int64_t n_experts, int64_t k) {
    std::vector<int32_t> ids(n_tokens * k), experts(n_experts);
    std::iota(experts.begin(), experts.end(), 0);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::shuffle(experts.begin(), experts.end(), rng_);
      std::copy_n(experts.begin(), k, ids.begin() + t * k);
    }
    return ids;
  }
  // Runs moe_experts on both backends (bf16 or MXFP4 weights) and compares the outputs.
  void check(const ExpertsCase& c, bool mxfp4);

  int scale_lo_ = 116, scale_hi_ = 122;  // random_mxfp4's e8m0 scale bytes
};

void MoeExpertsTest::check(const ExpertsCase& c, bool mxfp4) {
  SCOPED_TRACE(testing::Message() << (mxfp4 ? "MXFP4" : "bf16") << " T " << c.n_tokens << " E "
                                  << c.n_experts << " k " << c.top_k << " H " << c.hidden << " I "
                                  << c.inter);
  const int64_t E = c.n_experts, H = c.hidden, I = c.inter, T = c.n_tokens, k = c.top_k;
  std::vector<float> x = random_floats(T * H);
  std::vector<float> gate_up_bias = random_floats(E * 2 * I, 0.1f);
  std::vector<float> down_bias = random_floats(E * H, 0.1f);
  std::vector<float> out = random_floats(T * H);  // accumulated into when c.accumulate
  std::vector<int32_t> ids = random_ids(T, E, k);
  std::vector<float> weights = random_floats(T * k, 0.5f);
  for (float& w : weights) w = std::abs(w);
  DeviceTensor x_gpu = upload(x, {T, H}), gub_gpu = upload(gate_up_bias, {E, 2 * I});
  DeviceTensor db_gpu = upload(down_bias, {E, H});
  DeviceTensor ids_gpu = upload_i32(ids, {T, k});
  DeviceTensor w_gpu = upload(weights, {T, k}, DType::F32);
  DeviceTensor out_gpu = c.accumulate ? upload(out, {T, H}) : poisoned({T, H});
  // Weights: bf16 (rounded in place, so the CPU sees the same values) or MXFP4 bytes.
  std::vector<float> gate_up, down;
  Mxfp4Weights gate_up_q, down_q;
  DeviceTensor gu_gpu, down_gpu, gus_gpu, ds_gpu;
  MoeExpertWeights gpu_weights, cpu_weights;
  if (mxfp4) {
    gate_up_q = random_mxfp4(E * 2 * I, H);
    down_q = random_mxfp4(E * H, I);
    gu_gpu = upload_u8(gate_up_q.blocks, {E, 2 * I, H / 2});
    gus_gpu = upload_u8(gate_up_q.scales, {E, 2 * I, H / 32});
    down_gpu = upload_u8(down_q.blocks, {E, H, I / 2});
    ds_gpu = upload_u8(down_q.scales, {E, H, I / 32});
    const auto host_u8 = [](std::vector<uint8_t>& v, std::vector<int64_t> shape) {
      return Tensor::view_of(v.data(), DType::U8, shape);
    };
    cpu_weights.gate_up = host_u8(gate_up_q.blocks, {E, 2 * I, H / 2});
    cpu_weights.gate_up_scales = host_u8(gate_up_q.scales, {E, 2 * I, H / 32});
    cpu_weights.down = host_u8(down_q.blocks, {E, H, I / 2});
    cpu_weights.down_scales = host_u8(down_q.scales, {E, H, I / 32});
    gpu_weights.gate_up_scales = gus_gpu.tensor;
    gpu_weights.down_scales = ds_gpu.tensor;
  } else {
    gate_up = random_floats(E * 2 * I * H, 1.0f / std::sqrt(H));
    down = random_floats(E * H * I, 1.0f / std::sqrt(I));
    gu_gpu = upload(gate_up, {E, 2 * I, H});
    down_gpu = upload(down, {E, H, I});
    cpu_weights.gate_up = host_view(gate_up, {E, 2 * I, H});
    cpu_weights.down = host_view(down, {E, H, I});
  }
  gpu_weights.gate_up = gu_gpu.tensor;
  gpu_weights.down = down_gpu.tensor;
  if (c.biases) {
    gpu_weights.gate_up_bias = gub_gpu.tensor;
    gpu_weights.down_bias = db_gpu.tensor;
    cpu_weights.gate_up_bias = host_view(gate_up_bias, {E, 2 * I});
    cpu_weights.down_bias = host_view(down_bias, {E, H});
  }
  const size_t workspace_bytes = gpu_->moe_workspace_bytes(T, k, E, H, I);
  Buffer workspace = gpu_->allocate(workspace_bytes);
  const Tensor workspace_view = workspace.view(DType::U8, {int64_t(workspace_bytes)});
  const MoeExpertParams params{c.activation, 7.0f, 1.702f, c.accumulate};
  gpu_->moe_experts(x_gpu.tensor, ids_gpu.tensor, w_gpu.tensor, gpu_weights, params, workspace_view,
                    out_gpu.tensor);
  cpu_->moe_experts(host_view(x, {T, H}), host_view_i32(ids, {T, k}), host_view(weights, {T, k}),
                    cpu_weights, params, Tensor{}, host_view(out, {T, H}));
  EXPECT_CLOSE(download(out_gpu.tensor), out, kGemmTol);
}

// Up to kMoeSmallMaxTokens (4) tokens take the small-batch kernels (bf16: the streaming decode
// kernels where their inputs fit in shared memory), and MXFP4 weights the tensor-core decode
// kernels up to kMoeMxfp4DecodeMaxTokens (4); more tokens take the sorted path, whose
// products run on tensor cores (MXFP4 codes decoded into shared memory).
TEST_F(MoeExpertsTest, Bf16MatchesCpu) {
  const ExpertsCase cases[] = {
      // Qwen3-30B-A3B's expert shape (fewer experts, to keep the host reference small)
      {1, 16, 8, 2048, 768, MoeActivation::kSwiGlu, false, false},
      {16, 16, 8, 2048, 768, MoeActivation::kSwiGlu, false, true},  // + shared-expert sum
      {4, 8, 4, 1024, 512, MoeActivation::kSwiGlu, false, true},    // experts shared by tokens
      {2, 4, 4, 136, 40, MoeActivation::kSwiGlu, true, false},      // every expert, both tokens
      {5, 128, 8, 256, 64, MoeActivation::kSwiGlu, false, false},   // many experts
      {3, 8, 2, 1024, 1792, MoeActivation::kSwiGlu, false, false},
      {1, 4, 4, 2880, 2880, MoeActivation::kClampedSwiGluInterleaved, true, false},  // gpt-oss
      {9, 8, 4, 2880, 512, MoeActivation::kClampedSwiGluInterleaved, true, false},
      {200, 16, 3, 136, 40, MoeActivation::kSwiGlu, true, true},
      {64, 128, 8, 2048, 768, MoeActivation::kSwiGlu, false, false},  // Qwen3-30B-A3B
      {48, 8, 4, 320, 200, MoeActivation::kClampedSwiGluInterleaved, true, true},
      // 4 tokens whose 16 activated rows (128 KB) exceed what the streaming decode kernels
      // stage: the CUDA-core small-batch kernels take them.
      {4, 8, 4, 256, 4096, MoeActivation::kSwiGlu, true, true}};
  for (const ExpertsCase& c : cases) check(c, false);
}

TEST_F(MoeExpertsTest, Mxfp4MatchesCpu) {
  const ExpertsCase cases[] = {
      {1, 32, 4, 2880, 2880, MoeActivation::kClampedSwiGluInterleaved, true, false},  // gpt-oss
      {3, 8, 4, 2880, 2880, MoeActivation::kClampedSwiGluInterleaved, true, false},
      {4, 4, 4, 64, 96, MoeActivation::kSwiGlu, false, true},    // shared experts; CUDA cores
      {4, 4, 4, 128, 192, MoeActivation::kSwiGlu, false, true},  // the same on bulk copies
      {2, 8, 3, 128, 192, MoeActivation::kClampedSwiGluInterleaved, true, true},  // odd top_k
      // 5 tokens and more: the sorted path's grouped GEMMs (up to 8 pairs an expert on
      // average: the 6-stage ring; more: 3 stages)
      {8, 32, 4, 2880, 2880, MoeActivation::kClampedSwiGluInterleaved, true, false},  // gpt-oss
      {5, 8, 3, 128, 192, MoeActivation::kClampedSwiGluInterleaved, true, true},
      {7, 4, 4, 128, 192, MoeActivation::kSwiGlu, false, true},
      {9, 8, 4, 2880, 512, MoeActivation::kClampedSwiGluInterleaved, true, false},
      {70, 16, 2, 256, 160, MoeActivation::kClampedSwiGluInterleaved, true, true},  // K % 64 = 32
      {40, 32, 4, 2880, 2880, MoeActivation::kClampedSwiGluInterleaved, true, false},  // gpt-oss
      {130, 8, 4, 192, 96, MoeActivation::kSwiGlu, false, true}};  // 65 rows of one expert
  for (const ExpertsCase& c : cases) check(c, true);
}

// The decode-batch MXFP4 kernels apply each block's scale as an fp32 factor to its sums
// (moe_mxfp4_decode.cu); the other paths scale the decoded values. Scales 2^-35..2^13 (values
// up to 6 * 2^13; the clamped activation keeps the down inputs within fp16) check both far
// from 1.
TEST_F(MoeExpertsTest, Mxfp4WideScalesMatchCpu) {
  scale_lo_ = 92;
  scale_hi_ = 140;
  const ExpertsCase cases[] = {
      {1, 8, 4, 256, 128, MoeActivation::kClampedSwiGluInterleaved, true, false},
      {2, 8, 4, 256, 128, MoeActivation::kClampedSwiGluInterleaved, true, true},
      {12, 8, 4, 256, 128, MoeActivation::kClampedSwiGluInterleaved, true, true}};  // sorted
  for (const ExpertsCase& c : cases) check(c, true);
}

// A token's output from the small-batch kernels does not depend on its batch mates: token 0
// alone equals token 0 of a batch of 4, bit for bit.
TEST_F(MoeExpertsTest, SmallBatchRowsIndependent) {
  const int64_t E = 16, k = 4, H = 512, I = 256, T = 4;
  std::vector<float> x = random_floats(T * H);
  std::vector<float> gate_up = random_floats(E * 2 * I * H, 1.0f / std::sqrt(H));
  std::vector<float> down = random_floats(E * H * I, 1.0f / std::sqrt(I));
  std::vector<float> weights = random_floats(T * k, 0.5f);
  std::vector<int32_t> ids = random_ids(T, E, k);
  ids[k] = ids[0];  // token 1 shares token 0's first expert
  if (ids[k + 1] == ids[0]) ids[k + 1] = ids[1];
  DeviceTensor x_gpu = upload(x, {T, H}), gu_gpu = upload(gate_up, {E, 2 * I, H});
  DeviceTensor down_gpu = upload(down, {E, H, I}), ids_gpu = upload_i32(ids, {T, k});
  DeviceTensor w_gpu = upload(weights, {T, k}, DType::F32);
  const MoeExpertWeights experts{gu_gpu.tensor, Tensor{}, down_gpu.tensor, Tensor{}};
  const size_t workspace_bytes = gpu_->moe_workspace_bytes(T, k, E, H, I);
  Buffer workspace = gpu_->allocate(workspace_bytes);
  const Tensor workspace_view = workspace.view(DType::U8, {int64_t(workspace_bytes)});
  std::vector<float> rows[2];
  for (const int64_t n : {T, int64_t{1}}) {
    DeviceTensor out_gpu = poisoned({n, H});
    gpu_->moe_experts(x_gpu.tensor.slice_rows(0, n), ids_gpu.tensor.slice_rows(0, n),
                      w_gpu.tensor.slice_rows(0, n), experts, MoeExpertParams{}, workspace_view,
                      out_gpu.tensor);
    std::vector<float> out = download(out_gpu.tensor);
    rows[n == 1].assign(out.begin(), out.begin() + H);
  }
  EXPECT_EQ(rows[0], rows[1]);
}

}  // namespace
}  // namespace hadron::test
