// CUDA vs CPU: multi-head latent attention's cache write (q rope, latent RMSNorm, key rope, at
// scattered slots) and attention over a shuffled paged latent cache in the absorbed form, at
// DeepSeek-V3's shapes (128 heads, latent 512 + rope 64, nope 128 / v 128), Moonlight's (16
// heads), GLM-5's head dims (nope 192 / v 256) and a fixture's tiny ones; contexts off the block
// size, prefill, chunked prefill and decode batches of 1 to 256.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_test_util.h"

namespace hadron::test {
namespace {

struct MlaCase {
  int n_heads, nope, rope, latent, v, block_size;
  std::vector<Seq> seqs;
};

class MlaTest : public OpTest {
 protected:
  void run_case(const MlaCase& c);
};

MlaParams params_of(const MlaCase& c) {
  MlaParams p;
  p.n_heads = c.n_heads;
  p.nope_dim = c.nope;
  p.rope_dim = c.rope;
  p.latent_dim = c.latent;
  p.v_dim = c.v;
  p.norm_eps = 1e-6f;
  p.style = RopeStyle::kInterleaved;
  p.scale = 1.0f / std::sqrt(static_cast<float>(c.nope + c.rope));
  return p;
}

void MlaTest::run_case(const MlaCase& c) {
  SCOPED_TRACE(testing::Message() << c.n_heads << " heads, nope " << c.nope << " rope " << c.rope
                                  << " latent " << c.latent << " v " << c.v << ", block "
                                  << c.block_size << ", " << c.seqs.size() << " seqs");
  const MlaParams params = params_of(c);
  const int n_seqs = static_cast<int>(c.seqs.size());
  const int64_t entry = params.entry_dim(), qk = params.qk_dim();
  int n_tokens = 0, max_q = 0, max_kv = 0, max_blocks = 0, n_blocks = 3;
  for (const Seq& s : c.seqs) {
    n_tokens += s.q_len;
    max_q = std::max(max_q, s.q_len);
    max_kv = std::max(max_kv, s.kv_len);
    const int blocks = (s.kv_len + c.block_size - 1) / c.block_size;
    max_blocks = std::max(max_blocks, blocks);
    n_blocks += blocks;
  }
  std::vector<int32_t> block_ids(n_blocks);
  std::iota(block_ids.begin(), block_ids.end(), 0);
  std::shuffle(block_ids.begin(), block_ids.end(), rng_);
  std::vector<int32_t> block_tables(int64_t{n_seqs} * max_blocks, 0);
  std::vector<int32_t> cu_seqlens(n_seqs + 1, 0), kv_lens(n_seqs), positions, slots;
  int next_block = 0;
  for (int s = 0; s < n_seqs; ++s) {
    cu_seqlens[s + 1] = cu_seqlens[s] + c.seqs[s].q_len;
    kv_lens[s] = c.seqs[s].kv_len;
    for (int b = 0; b < (c.seqs[s].kv_len + c.block_size - 1) / c.block_size; ++b)
      block_tables[int64_t{s} * max_blocks + b] = block_ids[next_block++];
    for (int i = c.seqs[s].kv_len - c.seqs[s].q_len; i < c.seqs[s].kv_len; ++i) {
      positions.push_back(i);
      slots.push_back(block_tables[int64_t{s} * max_blocks + i / c.block_size] * c.block_size +
                      i % c.block_size);
    }
  }
  const std::vector<int64_t> q_shape{n_tokens, c.n_heads, qk}, kv_shape{n_tokens, entry},
      cache_shape{n_blocks, c.block_size, 1, entry}, out_shape{n_tokens, c.n_heads, c.v},
      kv_b_shape{int64_t{c.n_heads} * (c.nope + c.v), c.latent}, table_shape{max_kv, c.rope};
  std::vector<float> q = random_floats(n_tokens * c.n_heads * qk),
                     kv = random_floats(n_tokens * entry), kv_norm = random_floats(c.latent, 0.5f),
                     cache = random_floats(n_blocks * c.block_size * entry),
                     kv_b = random_floats(kv_b_shape[0] * c.latent,
                                          1.0f / std::sqrt(static_cast<float>(c.latent))),
                     cos_sin = random_floats(int64_t{max_kv} * c.rope);
  for (float& w : kv_norm) w += 1.0f;
  DeviceTensor q_gpu = upload(q, q_shape), kv_gpu = upload(kv, kv_shape),
               norm_gpu = upload(kv_norm, {c.latent}), cache_gpu = upload(cache, cache_shape),
               kv_b_gpu = upload(kv_b, kv_b_shape),
               table_gpu = upload(cos_sin, table_shape, DType::F32),
               pos_gpu = upload_i32(positions, {n_tokens}),
               slot_gpu = upload_i32(slots, {n_tokens}),
               cu_gpu = upload_i32(cu_seqlens, {n_seqs + 1}),
               lens_gpu = upload_i32(kv_lens, {n_seqs}),
               tables_gpu = upload_i32(block_tables, {n_seqs, max_blocks});
  DeviceTensor out = poisoned(out_shape);
  BatchMeta meta;
  meta.n_tokens = n_tokens;
  meta.n_seqs = n_seqs;
  meta.max_q_len = max_q;
  meta.max_kv_len = max_kv;
  meta.block_size = c.block_size;
  meta.decode_only = max_q == 1;
  meta.cu_seqlens_q = cu_gpu.tensor;
  meta.seq_lens_kv = lens_gpu.tensor;
  meta.block_tables = tables_gpu.tensor;
  gpu_->mla_rope_store(q_gpu.tensor, kv_gpu.tensor, norm_gpu.tensor, pos_gpu.tensor,
                       table_gpu.tensor, params, cache_gpu.tensor, slot_gpu.tensor);
  gpu_->mla_attention(q_gpu.tensor, cache_gpu.tensor, kv_b_gpu.tensor, meta, params, out.tensor);

  BatchMeta host_meta = meta;
  host_meta.cu_seqlens_q = host_view_i32(cu_seqlens, {n_seqs + 1});
  host_meta.seq_lens_kv = host_view_i32(kv_lens, {n_seqs});
  host_meta.block_tables = host_view_i32(block_tables, {n_seqs, max_blocks});
  std::vector<float> expected(int64_t{n_tokens} * c.n_heads * c.v);
  cpu_->mla_rope_store(host_view(q, q_shape), host_view(kv, kv_shape),
                       host_view(kv_norm, {c.latent}), host_view_i32(positions, {n_tokens}),
                       host_view(cos_sin, table_shape), params, host_view(cache, cache_shape),
                       host_view_i32(slots, {n_tokens}));
  cpu_->mla_attention(host_view(q, q_shape), host_view(cache, cache_shape),
                      host_view(kv_b, kv_b_shape), host_meta, params,
                      host_view(expected, out_shape));
  EXPECT_CLOSE(download(q_gpu.tensor), q, kElementwiseTol);
  EXPECT_CLOSE(slot_rows(download(cache_gpu.tensor), slots, entry), slot_rows(cache, slots, entry),
               kElementwiseTol);
  EXPECT_CLOSE(download(out.tensor), expected, kAttentionTol);
}

TEST_F(MlaTest, DecodeDeepSeekV3Shape128Heads) {
  run_case({128, 128, 64, 512, 128, 64, decode_batch(rng_, 4, 700)});
}
TEST_F(MlaTest, DecodeMoonlightShapeBatch256) {
  run_case({16, 128, 64, 512, 128, 16, decode_batch(rng_, 256, 300)});
}
TEST_F(MlaTest, DecodeBatch1LongContextOneHead) {
  run_case({1, 128, 64, 512, 128, 64, {{1, 3001}}});
}
TEST_F(MlaTest, PrefillAndChunkedPrefillMoonlightShape) {
  run_case({16, 128, 64, 512, 128, 64, {{37, 37}, {1, 100}, {70, 150}, {1, 1}}});
}
TEST_F(MlaTest, PrefillGlm5HeadDims) { run_case({8, 192, 64, 512, 256, 64, {{90, 90}, {5, 70}}}); }
TEST_F(MlaTest, FixtureShapes) { run_case({4, 16, 8, 32, 12, 16, {{33, 33}, {1, 45}, {7, 19}}}); }

}  // namespace
}  // namespace hadron::test
