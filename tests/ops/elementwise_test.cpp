// CUDA vs CPU: embedding, RMSNorm, add + RMSNorm, RoPE, store_kv, qkv_rope_store, SiLU-mul,
// gather_rows at real (Qwen3-8B) and awkward sizes.
#include <cmath>
#include <numeric>

#include "op_test_util.h"

namespace hadron::test {
namespace {

class ElementwiseTest : public OpTest {};

TEST_F(ElementwiseTest, EmbeddingCopiesRows) {
  for (const auto& [n_tokens, vocab, hidden] :
       {std::tuple{1, 1000, 4096}, {7, 151, 136}, {256, 5000, 1024}}) {
    SCOPED_TRACE(testing::Message() << "T " << n_tokens << " vocab " << vocab << " H " << hidden);
    std::vector<float> table = random_floats(int64_t{vocab} * hidden);
    std::vector<int32_t> ids = random_ints(n_tokens, 0, vocab - 1);
    DeviceTensor table_gpu = upload(table, {vocab, hidden});
    DeviceTensor ids_gpu = upload_i32(ids, {n_tokens});
    DeviceTensor out = poisoned({n_tokens, hidden});
    gpu_->embedding(ids_gpu.tensor, table_gpu.tensor, out.tensor);
    std::vector<float> expected(int64_t{n_tokens} * hidden);
    cpu_->embedding(host_view_i32(ids, {n_tokens}), host_view(table, {vocab, hidden}),
                    host_view(expected, {n_tokens, hidden}));
    EXPECT_EQ(relative_error(download(out.tensor), expected), 0.0);
  }
}

TEST_F(ElementwiseTest, RmsNormAndAddRmsNorm) {
  for (const auto& [n_rows, width] :
       {std::pair{1, 4096}, {7, 128}, {256, 4096}, {3, 5120}, {5, 1000}, {2, 12288}}) {
    SCOPED_TRACE(testing::Message() << "rows " << n_rows << " width " << width);
    const int64_t n = int64_t{n_rows} * width;
    std::vector<float> x = random_floats(n, 2.0f), residual = random_floats(n),
                       weight = random_floats(width, 0.5f);
    DeviceTensor x_gpu = upload(x, {n_rows, width}), w_gpu = upload(weight, {width});
    DeviceTensor res_gpu = upload(residual, {n_rows, width});
    DeviceTensor out = poisoned({n_rows, width});
    gpu_->rms_norm(x_gpu.tensor, w_gpu.tensor, 1e-6f, out.tensor);
    std::vector<float> expected(n);
    cpu_->rms_norm(host_view(x, {n_rows, width}), host_view(weight, {width}), 1e-6f,
                   host_view(expected, {n_rows, width}));
    EXPECT_CLOSE(download(out.tensor), expected, kElementwiseTol);

    DeviceTensor out2 = poisoned({n_rows, width});
    gpu_->add_rms_norm(x_gpu.tensor, res_gpu.tensor, w_gpu.tensor, 1e-6f, out2.tensor);
    cpu_->add_rms_norm(host_view(x, {n_rows, width}), host_view(residual, {n_rows, width}),
                       host_view(weight, {width}), 1e-6f, host_view(expected, {n_rows, width}));
    EXPECT_CLOSE(download(out2.tensor), expected, kElementwiseTol);
    EXPECT_CLOSE(download(res_gpu.tensor), residual, kElementwiseTol);
  }
}

// cos/sin table as the models build it: theta_i = pos * base^(-2i / rotary_dim).
std::vector<float> rope_table(int64_t max_pos, int64_t rotary_dim) {
  std::vector<float> table(max_pos * rotary_dim);
  const int64_t half = rotary_dim / 2;
  for (int64_t p = 0; p < max_pos; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = p * std::pow(1e6, -2.0 * i / rotary_dim);
      table[p * rotary_dim + i] = static_cast<float>(std::cos(angle));
      table[p * rotary_dim + half + i] = static_cast<float>(std::sin(angle));
    }
  return table;
}

TEST_F(ElementwiseTest, Rope) {
  constexpr int64_t kMaxPos = 4096;
  for (const int64_t head_dim : {64, 128, 256})
    for (const int64_t rotary_dim : {head_dim, head_dim / 2})
      for (const RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved})
        for (const int64_t n_tokens : {1, 37}) {
          SCOPED_TRACE(testing::Message()
                       << "head_dim " << head_dim << " rotary " << rotary_dim << " neox "
                       << (style == RopeStyle::kNeox) << " T " << n_tokens);
          const int64_t n_heads = 3;
          std::vector<float> x = random_floats(n_tokens * n_heads * head_dim);
          std::vector<float> table = rope_table(kMaxPos, rotary_dim);
          std::vector<int32_t> positions = random_ints(n_tokens, 0, kMaxPos - 1);
          DeviceTensor x_gpu = upload(x, {n_tokens, n_heads, head_dim});
          DeviceTensor table_gpu = upload(table, {kMaxPos, rotary_dim}, DType::F32);
          DeviceTensor pos_gpu = upload_i32(positions, {n_tokens});
          gpu_->rope(x_gpu.tensor, pos_gpu.tensor, table_gpu.tensor, style);
          cpu_->rope(host_view(x, {n_tokens, n_heads, head_dim}),
                     host_view_i32(positions, {n_tokens}), host_view(table, {kMaxPos, rotary_dim}),
                     style);
          EXPECT_CLOSE(download(x_gpu.tensor), x, kElementwiseTol);
        }
}

TEST_F(ElementwiseTest, StoreKvWritesSlots) {
  const int64_t n_blocks = 40, block_size = 16, n_kv_heads = 8, head_dim = 128;
  for (const int64_t n_tokens : {1, 77, 256}) {
    SCOPED_TRACE(testing::Message() << "T " << n_tokens);
    const int64_t cache_elems = n_blocks * block_size * n_kv_heads * head_dim;
    std::vector<float> k = random_floats(n_tokens * n_kv_heads * head_dim),
                       v = random_floats(n_tokens * n_kv_heads * head_dim),
                       k_cache = random_floats(cache_elems), v_cache = random_floats(cache_elems);
    std::vector<int32_t> slots(n_blocks * block_size);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng_);
    slots.resize(n_tokens);
    const std::vector<int64_t> token_shape{n_tokens, n_kv_heads, head_dim},
        cache_shape{n_blocks, block_size, n_kv_heads, head_dim};
    DeviceTensor k_gpu = upload(k, token_shape), v_gpu = upload(v, token_shape);
    DeviceTensor kc_gpu = upload(k_cache, cache_shape), vc_gpu = upload(v_cache, cache_shape);
    DeviceTensor slots_gpu = upload_i32(slots, {n_tokens});
    gpu_->store_kv(k_gpu.tensor, v_gpu.tensor, kc_gpu.tensor, vc_gpu.tensor, slots_gpu.tensor);
    cpu_->store_kv(host_view(k, token_shape), host_view(v, token_shape),
                   host_view(k_cache, cache_shape), host_view(v_cache, cache_shape),
                   host_view_i32(slots, {n_tokens}));
    EXPECT_EQ(relative_error(download(kc_gpu.tensor), k_cache), 0.0);
    EXPECT_EQ(relative_error(download(vc_gpu.tensor), v_cache), 0.0);
  }
}

TEST_F(ElementwiseTest, QkvRopeStore) {
  constexpr int64_t kMaxPos = 2048, kBlocks = 24, kBlockSize = 16;
  struct Case {
    int64_t n_heads, n_kv_heads, head_dim, rotary_dim, n_tokens;
    bool norms;
    RopeStyle style;
  };
  for (const Case c : {Case{32, 8, 128, 128, 1, true, RopeStyle::kNeox},
                       Case{32, 8, 128, 128, 133, true, RopeStyle::kNeox},
                       Case{4, 1, 64, 32, 19, false, RopeStyle::kNeox},
                       Case{6, 6, 256, 256, 5, true, RopeStyle::kInterleaved},
                       Case{8, 2, 256, 64, 64, false, RopeStyle::kInterleaved},
                       // Head dims between the kernel's tile widths (64, 128, 256).
                       Case{4, 2, 32, 32, 9, true, RopeStyle::kNeox},
                       Case{6, 2, 48, 48, 17, true, RopeStyle::kNeox},
                       Case{4, 4, 80, 40, 3, true, RopeStyle::kInterleaved},
                       Case{8, 1, 112, 112, 33, false, RopeStyle::kNeox},
                       Case{2, 1, 144, 144, 5, true, RopeStyle::kNeox},
                       Case{4, 2, 240, 96, 7, true, RopeStyle::kInterleaved}}) {
    SCOPED_TRACE(testing::Message()
                 << "heads " << c.n_heads << "/" << c.n_kv_heads << " x " << c.head_dim
                 << " rotary " << c.rotary_dim << " T " << c.n_tokens << " norms " << c.norms);
    const int64_t width = (c.n_heads + 2 * c.n_kv_heads) * c.head_dim;
    const std::vector<int64_t> cache_shape{kBlocks, kBlockSize, c.n_kv_heads, c.head_dim};
    const int64_t cache_elems = kBlocks * kBlockSize * c.n_kv_heads * c.head_dim;
    std::vector<float> qkv = random_floats(c.n_tokens * width, 3.0f);
    std::vector<float> q_norm = random_floats(c.head_dim), k_norm = random_floats(c.head_dim);
    std::vector<float> k_cache = random_floats(cache_elems), v_cache = random_floats(cache_elems);
    std::vector<float> table = rope_table(kMaxPos, c.rotary_dim);
    std::vector<int32_t> positions = random_ints(c.n_tokens, 0, kMaxPos - 1);
    std::vector<int32_t> slots(kBlocks * kBlockSize);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng_);
    slots.resize(c.n_tokens);
    DeviceTensor qkv_gpu = upload(qkv, {c.n_tokens, width});
    DeviceTensor qn_gpu = upload(q_norm, {c.head_dim}), kn_gpu = upload(k_norm, {c.head_dim});
    DeviceTensor kc_gpu = upload(k_cache, cache_shape), vc_gpu = upload(v_cache, cache_shape);
    DeviceTensor table_gpu = upload(table, {kMaxPos, c.rotary_dim}, DType::F32);
    DeviceTensor pos_gpu = upload_i32(positions, {c.n_tokens});
    DeviceTensor slots_gpu = upload_i32(slots, {c.n_tokens});
    DeviceTensor q_out = poisoned({c.n_tokens, c.n_heads, c.head_dim});
    const QkvParams params{c.n_heads, c.n_kv_heads, c.head_dim, 1e-6f, c.style};
    gpu_->qkv_rope_store(qkv_gpu.tensor, c.norms ? qn_gpu.tensor : Tensor{},
                         c.norms ? kn_gpu.tensor : Tensor{}, pos_gpu.tensor, table_gpu.tensor,
                         params, kc_gpu.tensor, vc_gpu.tensor, slots_gpu.tensor, q_out.tensor);
    std::vector<float> q_expected(c.n_tokens * c.n_heads * c.head_dim);
    cpu_->qkv_rope_store(
        host_view(qkv, {c.n_tokens, width}), c.norms ? host_view(q_norm, {c.head_dim}) : Tensor{},
        c.norms ? host_view(k_norm, {c.head_dim}) : Tensor{},
        host_view_i32(positions, {c.n_tokens}), host_view(table, {kMaxPos, c.rotary_dim}), params,
        host_view(k_cache, cache_shape), host_view(v_cache, cache_shape),
        host_view_i32(slots, {c.n_tokens}),
        host_view(q_expected, {c.n_tokens, c.n_heads, c.head_dim}));
    EXPECT_CLOSE(download(q_out.tensor), q_expected, kElementwiseTol);
    const int64_t token_elems = c.n_kv_heads * c.head_dim;
    EXPECT_CLOSE(slot_rows(download(kc_gpu.tensor), slots, token_elems),
                 slot_rows(k_cache, slots, token_elems), kElementwiseTol);
    EXPECT_EQ(relative_error(download(vc_gpu.tensor), v_cache), 0.0);  // copies, and the rest
  }
}

TEST_F(ElementwiseTest, SiluMul) {
  for (const auto& [n_tokens, inter] : {std::pair{1, 12288}, {7, 1000}, {256, 12288}}) {
    SCOPED_TRACE(testing::Message() << "T " << n_tokens << " I " << inter);
    std::vector<float> gate_up = random_floats(int64_t{n_tokens} * 2 * inter, 2.0f);
    DeviceTensor in = upload(gate_up, {n_tokens, 2 * inter});
    DeviceTensor out = poisoned({n_tokens, inter});
    gpu_->silu_mul(in.tensor, out.tensor);
    std::vector<float> expected(int64_t{n_tokens} * inter);
    cpu_->silu_mul(host_view(gate_up, {n_tokens, 2 * inter}),
                   host_view(expected, {n_tokens, inter}));
    EXPECT_CLOSE(download(out.tensor), expected, kElementwiseTol);
  }
}

TEST_F(ElementwiseTest, GatherRows) {
  for (const auto& [n_tokens, n_rows, width] :
       {std::tuple{300, 1, 4096}, {300, 256, 4096}, {9, 4, 136}}) {
    SCOPED_TRACE(testing::Message() << "T " << n_tokens << " R " << n_rows << " H " << width);
    std::vector<float> x = random_floats(int64_t{n_tokens} * width);
    std::vector<int32_t> rows = random_ints(n_rows, 0, n_tokens - 1);
    DeviceTensor x_gpu = upload(x, {n_tokens, width}), rows_gpu = upload_i32(rows, {n_rows});
    DeviceTensor out = poisoned({n_rows, width});
    gpu_->gather_rows(x_gpu.tensor, rows_gpu.tensor, out.tensor);
    std::vector<float> expected(int64_t{n_rows} * width);
    cpu_->gather_rows(host_view(x, {n_tokens, width}), host_view_i32(rows, {n_rows}),
                      host_view(expected, {n_rows, width}));
    EXPECT_EQ(relative_error(download(out.tensor), expected), 0.0);
  }
}

}  // namespace
}  // namespace hadron::test
