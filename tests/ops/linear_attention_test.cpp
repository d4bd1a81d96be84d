// CUDA vs CPU: the gated DeltaNet ops (causal convolution, gated delta rule, gated RMSNorm,
// sigmoid gate) over steps that mix fresh prefills, chunked prefills continuing from state,
// decode rows and padding rows (slot -1), at Qwen3.5's shapes and awkward small ones: lengths
// off the kernels' row tiles (16, 64), value heads sharing key heads, key and value head sizes
// off the kernels' tiles (the fixtures' 16 and 24). Each op gets the other's inputs as the GPU
// computed them, so each is checked alone; the states carried across steps are compared at the end.
#include <algorithm>

#include "op_test_util.h"

namespace hadron::test {
namespace {

// One sequence of a step: its state slot (-1: a padding row), first position, rows.
struct LinearSeq {
  int slot, first, n;
};

struct DeltaCase {
  LinearAttentionParams params;
  int n_slots;
  std::vector<std::vector<LinearSeq>> steps;
};

class LinearAttentionTest : public OpTest {
 protected:
  void run_case(const DeltaCase& c);
  void run_step(const DeltaCase& c, const std::vector<LinearSeq>& seqs);

  // Parameters and states, on both sides (the CPU's as f32 of the GPU's values).
  std::vector<float> conv_w_, a_log_, dt_bias_, norm_w_, conv_states_, states_;
  DeviceTensor conv_w_gpu_, a_log_gpu_, dt_bias_gpu_, norm_w_gpu_, conv_states_gpu_, states_gpu_;
};

// Rows of real sequences (padding rows are left unwritten by both sides).
std::vector<float> real_rows(const std::vector<float>& values, const std::vector<LinearSeq>& seqs,
                             int64_t width) {
  std::vector<float> rows;
  int64_t row = 0;
  for (const LinearSeq& s : seqs) {
    if (s.slot >= 0)
      rows.insert(rows.end(), values.begin() + row * width, values.begin() + (row + s.n) * width);
    row += s.n;
  }
  return rows;
}

void LinearAttentionTest::run_step(const DeltaCase& c, const std::vector<LinearSeq>& seqs) {
  const LinearAttentionParams& p = c.params;
  std::vector<int32_t> positions, cu_seqlens{0}, slots;
  int max_q = 0;
  for (const LinearSeq& s : seqs) {
    for (int i = 0; i < s.n; ++i) positions.push_back(s.first + i);
    cu_seqlens.push_back(cu_seqlens.back() + s.n);
    slots.push_back(s.slot);
    max_q = std::max(max_q, s.n);
  }
  const int n_tokens = cu_seqlens.back(), n_seqs = static_cast<int>(seqs.size());
  const int64_t conv_dim = p.conv_dim(), hv = p.n_value_heads, dv = p.value_head_dim;
  DeviceTensor pos_gpu = upload_i32(positions, {n_tokens}),
               cu_gpu = upload_i32(cu_seqlens, {n_seqs + 1}),
               slots_gpu = upload_i32(slots, {n_seqs});
  BatchMeta meta;
  meta.n_tokens = n_tokens;
  meta.n_seqs = n_seqs;
  meta.max_q_len = max_q;
  meta.decode_only = max_q == 1;
  meta.positions = pos_gpu.tensor;
  meta.cu_seqlens_q = cu_gpu.tensor;
  meta.state_slots = slots_gpu.tensor;
  BatchMeta host_meta = meta;
  host_meta.positions = host_view_i32(positions, {n_tokens});
  host_meta.cu_seqlens_q = host_view_i32(cu_seqlens, {n_seqs + 1});
  host_meta.state_slots = host_view_i32(slots, {n_seqs});

  const std::vector<int64_t> qkv_shape{n_tokens, conv_dim}, out_shape{n_tokens, hv, dv},
      rows_shape{n_tokens * hv, dv};
  std::vector<float> qkv = random_floats(n_tokens * conv_dim),
                     ba = random_floats(n_tokens * 2 * hv), z = random_floats(n_tokens * hv * dv);
  DeviceTensor qkv_gpu = upload(qkv, qkv_shape),
               ba_gpu = upload(ba, {n_tokens, 2 * hv}, DType::F32), z_gpu = upload(z, rows_shape),
               mixed_gpu = poisoned(qkv_shape), core_gpu = poisoned(out_shape),
               gated_gpu = poisoned(rows_shape);
  const Tensor conv_w_view = conv_w_gpu_.tensor.reshape({conv_dim, p.conv_kernel});
  gpu_->causal_conv1d(qkv_gpu.tensor, conv_w_view, conv_states_gpu_.tensor, meta, mixed_gpu.tensor);
  gpu_->gated_delta_rule(mixed_gpu.tensor, ba_gpu.tensor, a_log_gpu_.tensor, dt_bias_gpu_.tensor,
                         states_gpu_.tensor, meta, p, core_gpu.tensor);
  gpu_->rms_norm_gated(core_gpu.tensor, z_gpu.tensor, norm_w_gpu_.tensor, 1e-6f, gated_gpu.tensor);

  std::vector<float> mixed(qkv.size()), core(n_tokens * hv * dv), gated(core.size());
  const std::vector<int64_t> conv_shape{c.n_slots, conv_dim, p.conv_kernel - 1};
  cpu_->causal_conv1d(host_view(qkv, qkv_shape), host_view(conv_w_, {conv_dim, p.conv_kernel}),
                      host_view(conv_states_, conv_shape), host_meta, host_view(mixed, qkv_shape));
  EXPECT_CLOSE(real_rows(download(mixed_gpu.tensor), seqs, conv_dim),
               real_rows(mixed, seqs, conv_dim), kElementwiseTol);
  std::vector<float> gpu_mixed = download(mixed_gpu.tensor), gpu_core = download(core_gpu.tensor);
  std::replace_if(
      gpu_mixed.begin(), gpu_mixed.end(), [](float x) { return x != x; }, 0.0f);
  std::replace_if(
      gpu_core.begin(), gpu_core.end(), [](float x) { return x != x; }, 0.0f);
  cpu_->gated_delta_rule(host_view(gpu_mixed, qkv_shape), host_view(ba, {n_tokens, 2 * hv}),
                         host_view(a_log_, {hv}), host_view(dt_bias_, {hv}),
                         host_view(states_, {c.n_slots, hv, p.key_head_dim, dv}), host_meta, p,
                         host_view(core, out_shape));
  EXPECT_CLOSE(real_rows(download(core_gpu.tensor), seqs, hv * dv), real_rows(core, seqs, hv * dv),
               kGemmTol);
  cpu_->rms_norm_gated(host_view(gpu_core, rows_shape), host_view(z, rows_shape),
                       host_view(norm_w_, {dv}), 1e-6f, host_view(gated, rows_shape));
  EXPECT_CLOSE(real_rows(download(gated_gpu.tensor), seqs, hv * dv),
               real_rows(gated, seqs, hv * dv), kElementwiseTol);
}

void LinearAttentionTest::run_case(const DeltaCase& c) {
  const LinearAttentionParams& p = c.params;
  SCOPED_TRACE(testing::Message() << "key heads " << p.n_key_heads << " x " << p.key_head_dim
                                  << ", value heads " << p.n_value_heads << " x "
                                  << p.value_head_dim << ", kernel " << p.conv_kernel);
  const int64_t conv_dim = p.conv_dim(), hv = p.n_value_heads;
  conv_w_ = random_floats(conv_dim * p.conv_kernel, 0.5f);
  a_log_ = random_floats(hv, 0.5f);
  dt_bias_ = random_floats(hv, 0.5f);
  norm_w_ = random_floats(p.value_head_dim, 0.3f);
  for (float& w : norm_w_) w += 1.0f;
  // Stale states: fresh sequences must ignore them, continuing ones start from them.
  conv_states_ = random_floats(c.n_slots * conv_dim * (p.conv_kernel - 1));
  states_ = random_floats(c.n_slots * hv * p.key_head_dim * p.value_head_dim, 0.1f);
  conv_w_gpu_ = upload(conv_w_, {conv_dim, 1, p.conv_kernel});
  a_log_gpu_ = upload(a_log_, {hv}, DType::F32);
  dt_bias_gpu_ = upload(dt_bias_, {hv}, DType::F32);
  norm_w_gpu_ = upload(norm_w_, {p.value_head_dim});
  conv_states_gpu_ = upload(conv_states_, {c.n_slots, conv_dim, p.conv_kernel - 1});
  states_gpu_ = upload(states_, {c.n_slots, hv, p.key_head_dim, p.value_head_dim}, DType::F32);
  for (size_t step = 0; step < c.steps.size(); ++step) {
    SCOPED_TRACE(testing::Message() << "step " << step);
    run_step(c, c.steps[step]);
  }
  EXPECT_CLOSE(download(conv_states_gpu_.tensor), conv_states_, kElementwiseTol);
  EXPECT_CLOSE(download(states_gpu_.tensor), states_, kGemmTol);
}

LinearAttentionParams shape(int64_t hk, int64_t hv, int64_t dk, int64_t dv, int64_t kernel) {
  return {hk, hv, dk, dv, kernel};
}

TEST_F(LinearAttentionTest, Qwen35ShapesPrefillChunkedPrefillDecodeAndPadding) {
  run_case({shape(16, 32, 128, 128, 4),
            5,
            {{{3, 0, 37}, {0, 0, 1}, {-1, 0, 1}, {4, 9, 3}},
             {{3, 37, 20}, {0, 1, 1}, {1, 0, 5}, {-1, 0, 1}}}});
}

TEST_F(LinearAttentionTest, DecodeBatch64FromState) {
  std::vector<LinearSeq> decode;
  for (int s = 0; s < 64; ++s) decode.push_back({s, 10 + s, 1});
  run_case({shape(16, 32, 128, 128, 4), 64, {decode, decode}});
}

TEST_F(LinearAttentionTest, LongPrefillSmallHeadsGroupOfThree) {
  run_case({shape(2, 6, 64, 32, 3), 3, {{{1, 0, 300}, {2, 0, 63}}, {{1, 300, 129}, {2, 63, 1}}}});
}

TEST_F(LinearAttentionTest, KeyHeadDim256Kernel2) {
  run_case({shape(1, 2, 256, 64, 2), 2, {{{0, 0, 17}, {1, 4, 2}}, {{0, 17, 16}}}});
}

TEST_F(LinearAttentionTest, FixtureShapesOffTheTiles) {
  run_case(
      {shape(2, 4, 16, 24, 4), 3, {{{0, 0, 21}, {1, 0, 1}}, {{0, 21, 5}, {1, 1, 1}, {2, 0, 40}}}});
}

TEST_F(LinearAttentionTest, SigmoidMulPerElementAndPerRowGates) {
  for (const int64_t gate_width : {int64_t{40}, int64_t{1}}) {
    SCOPED_TRACE(testing::Message() << "gate width " << gate_width);
    std::vector<float> x = random_floats(33 * 40), gate = random_floats(33 * gate_width, 2.0f);
    std::vector<float> expected(x.size());
    DeviceTensor x_gpu = upload(x, {33, 40}), gate_gpu = upload(gate, {33, gate_width}),
                 out = poisoned({33, 40});
    gpu_->sigmoid_mul(x_gpu.tensor, gate_gpu.tensor, out.tensor);
    cpu_->sigmoid_mul(host_view(x, {33, 40}), host_view(gate, {33, gate_width}),
                      host_view(expected, {33, 40}));
    EXPECT_CLOSE(download(out.tensor), expected, kElementwiseTol);
  }
}

}  // namespace
}  // namespace hadron::test
