// CUDA vs CPU: causal GQA attention over a paged cache whose blocks are shuffled, for
// prefill / chunked prefill (tiled kernel), decode-only batches (split-KV kernel) and mixed
// batches (both kernels: sequences of one query take the split-KV one): head_dim 64/128/256,
// GQA ratios 1-8, lengths off the tile and block sizes, sliding windows, per-head sink logits
// (gpt-oss; decode with one split, a combine pass and a clustered merge), batch 1 and 256.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_test_util.h"

namespace hadron::test {
namespace {

struct AttentionCase {
  int n_heads, n_kv_heads, head_dim, block_size;
  std::vector<Seq> seqs;
  int sliding_window = 0;
  bool sinks = false;
};

class AttentionTest : public OpTest {
 protected:
  void run_case(const AttentionCase& c);
};

void AttentionTest::run_case(const AttentionCase& c) {
  SCOPED_TRACE(testing::Message() << "heads " << c.n_heads << "/" << c.n_kv_heads << " x "
                                  << c.head_dim << " block " << c.block_size << " seqs "
                                  << c.seqs.size() << " window " << c.sliding_window
                                  << (c.sinks ? " sinks" : ""));
  const int n_seqs = static_cast<int>(c.seqs.size());
  int n_tokens = 0, max_q = 0, max_kv = 0, max_blocks = 0, n_blocks = 0;
  bool decode_only = true;
  for (const Seq& s : c.seqs) {
    n_tokens += s.q_len;
    max_q = std::max(max_q, s.q_len);
    max_kv = std::max(max_kv, s.kv_len);
    const int blocks = (s.kv_len + c.block_size - 1) / c.block_size;
    max_blocks = std::max(max_blocks, blocks);
    n_blocks += blocks;
    decode_only = decode_only && s.q_len == 1;
  }
  n_blocks += 3;  // blocks nobody owns, full of random data too
  // Each sequence owns a random set of blocks; unused table entries point at block 0.
  std::vector<int32_t> block_ids(n_blocks);
  std::iota(block_ids.begin(), block_ids.end(), 0);
  std::shuffle(block_ids.begin(), block_ids.end(), rng_);
  std::vector<int32_t> block_tables(int64_t{n_seqs} * max_blocks, 0);
  std::vector<int32_t> cu_seqlens(n_seqs + 1, 0), kv_lens(n_seqs);
  int next_block = 0;
  for (int s = 0; s < n_seqs; ++s) {
    cu_seqlens[s + 1] = cu_seqlens[s] + c.seqs[s].q_len;
    kv_lens[s] = c.seqs[s].kv_len;
    for (int b = 0; b < (c.seqs[s].kv_len + c.block_size - 1) / c.block_size; ++b)
      block_tables[int64_t{s} * max_blocks + b] = block_ids[next_block++];
  }
  const std::vector<int64_t> cache_shape{n_blocks, c.block_size, c.n_kv_heads, c.head_dim};
  const std::vector<int64_t> q_shape{n_tokens, c.n_heads, c.head_dim};
  const int64_t cache_elems = int64_t{n_blocks} * c.block_size * c.n_kv_heads * c.head_dim;
  std::vector<float> q = random_floats(int64_t{n_tokens} * c.n_heads * c.head_dim),
                     k_cache = random_floats(cache_elems), v_cache = random_floats(cache_elems);
  DeviceTensor q_gpu = upload(q, q_shape), k_gpu = upload(k_cache, cache_shape),
               v_gpu = upload(v_cache, cache_shape);
  DeviceTensor cu_gpu = upload_i32(cu_seqlens, {n_seqs + 1}),
               kv_gpu = upload_i32(kv_lens, {n_seqs}),
               tables_gpu = upload_i32(block_tables, {n_seqs, max_blocks});
  DeviceTensor out = poisoned(q_shape);
  // Sinks around log(keys seen by the longest sequence) +- 2: from negligible to dominant,
  // so a sink that is dropped or counted once per split shows in the error.
  const int keys = c.sliding_window > 0 ? std::min(max_kv, c.sliding_window) : max_kv;
  std::vector<float> sinks = random_floats(c.sinks ? c.n_heads : 0, 2.0f);
  for (float& sink : sinks) sink += std::log(static_cast<float>(keys));
  DeviceTensor sinks_gpu;
  if (c.sinks) sinks_gpu = upload(sinks, {c.n_heads});

  BatchMeta meta;
  meta.n_tokens = n_tokens;
  meta.n_seqs = n_seqs;
  meta.max_q_len = max_q;
  meta.max_kv_len = max_kv;
  meta.block_size = c.block_size;
  meta.decode_only = decode_only;
  meta.cu_seqlens_q = cu_gpu.tensor;
  meta.seq_lens_kv = kv_gpu.tensor;
  meta.block_tables = tables_gpu.tensor;
  const AttentionParams params{1.0f / std::sqrt(static_cast<float>(c.head_dim)), c.sliding_window,
                               0.0f, sinks_gpu.tensor};
  gpu_->attention(q_gpu.tensor, k_gpu.tensor, v_gpu.tensor, meta, params, out.tensor);

  BatchMeta host_meta = meta;
  host_meta.cu_seqlens_q = host_view_i32(cu_seqlens, {n_seqs + 1});
  host_meta.seq_lens_kv = host_view_i32(kv_lens, {n_seqs});
  host_meta.block_tables = host_view_i32(block_tables, {n_seqs, max_blocks});
  AttentionParams host_params = params;
  if (c.sinks) host_params.sinks = host_view(sinks, {c.n_heads});
  std::vector<float> expected(q.size());
  cpu_->attention(host_view(q, q_shape), host_view(k_cache, cache_shape),
                  host_view(v_cache, cache_shape), host_meta, host_params,
                  host_view(expected, q_shape));
  EXPECT_CLOSE(download(out.tensor), expected, kAttentionTol);
}

TEST_F(AttentionTest, PrefillQwen3Shape) {
  run_case({32, 8, 128, 16, {{1, 1}, {70, 70}, {37, 200}, {129, 169}}});
}
TEST_F(AttentionTest, PrefillHeadDim64NoGrouping) {
  run_case({8, 8, 64, 32, {{65, 65}, {1, 97}, {200, 333}}});
}
TEST_F(AttentionTest, PrefillHeadDim256Group8) {
  run_case({8, 1, 256, 16, {{100, 100}, {17, 50}}});
}
TEST_F(AttentionTest, PrefillGroup3LargeBlocks) {
  run_case({6, 2, 128, 64, {{128, 128}, {63, 191}}});
}
TEST_F(AttentionTest, PrefillGroup7SmallBlocks) { run_case({7, 1, 128, 8, {{90, 90}, {3, 45}}}); }
TEST_F(AttentionTest, PrefillSlidingWindow) {
  run_case({4, 2, 128, 16, {{150, 150}, {20, 300}}, 50});
}
TEST_F(AttentionTest, PrefillLong) { run_case({4, 1, 128, 16, {{1000, 1000}}}); }
TEST_F(AttentionTest, PrefillSinks) {
  run_case({32, 8, 128, 16, {{70, 70}, {1, 1}, {129, 169}}, 0, true});
}
// gpt-oss-20b's attention: 64 query / 8 KV heads of 64, window 128 on alternate layers.
TEST_F(AttentionTest, PrefillGptOssShapeSinksSlidingWindow) {
  run_case({64, 8, 64, 16, {{300, 300}, {1, 1}, {37, 250}}, 128, true});
}

TEST_F(AttentionTest, DecodeBatch1LongContext) { run_case({32, 8, 128, 16, {{1, 5000}}}); }
TEST_F(AttentionTest, DecodeBatch256) { run_case({32, 8, 128, 16, decode_batch(rng_, 256, 600)}); }
TEST_F(AttentionTest, DecodeHeadDim64NoGrouping) {
  run_case({4, 4, 64, 32, {{1, 1}, {1, 129}, {1, 1000}}});
}
TEST_F(AttentionTest, DecodeHeadDim256) { run_case({16, 2, 256, 16, decode_batch(rng_, 5, 700)}); }
TEST_F(AttentionTest, DecodeGroup3) { run_case({6, 2, 128, 16, decode_batch(rng_, 4, 400)}); }
TEST_F(AttentionTest, DecodeGroup8SlidingWindow) {
  run_case({8, 1, 128, 16, {{1, 1000}, {1, 37}}, 100});
}
// Batch 1 splits the keys over a cluster of CTAs: the sink joins once, in the cluster's merge.
TEST_F(AttentionTest, DecodeGptOssShapeSinksSplit) {
  run_case({64, 8, 64, 16, {{1, 3000}}, 0, true});
}
TEST_F(AttentionTest, DecodeGptOssShapeSinksSlidingWindowSplit) {
  run_case({64, 8, 64, 16, {{1, 3000}}, 128, true});
}
TEST_F(AttentionTest, DecodeGptOssShapeSinksFewSplits) {
  run_case({64, 8, 64, 16, decode_batch(rng_, 16, 2000), 0, true});
}
// A few window-capped splits in less than a wave merge in a cluster of their own count (on an
// H100: 5 splits pushing their states, group 4 x head_dim 128 = 512 elements; then 4 pulling
// them, group 8).
TEST_F(AttentionTest, DecodeSlidingWindowFewSplitsClusteredPush) {
  run_case({32, 8, 128, 16, {{1, 2000}, {1, 500}, {1, 40}}, 300});
}
TEST_F(AttentionTest, DecodeSlidingWindowFewSplitsClusteredPull) {
  run_case({64, 8, 128, 16, {{1, 2000}}, 200, true});
}
// Contexts far longer than a CTA's chunk, many splits of which some are empty, tiles that
// straddle small blocks, large blocks, and the 1000-in / 1000-out steady state (one split).
TEST_F(AttentionTest, DecodeBatch1VeryLongContext) { run_case({32, 8, 128, 16, {{1, 33000}}}); }
TEST_F(AttentionTest, DecodeManySplitsRagged) {
  run_case({32, 8, 128, 16, {{1, 20000}, {1, 1}, {1, 63}, {1, 4097}}});
}
TEST_F(AttentionTest, DecodeGroup7SmallBlocksManySplits) {
  run_case({7, 1, 128, 8, decode_batch(rng_, 3, 3000)});
}
TEST_F(AttentionTest, DecodeHeadDim256Group8LargeBlocks) {
  run_case({16, 2, 256, 64, decode_batch(rng_, 3, 5000)});
}
TEST_F(AttentionTest, DecodeHeadDim64Group2SlidingWindowSplits) {
  run_case({4, 2, 64, 16, {{1, 9000}, {1, 300}}, 1000});
}
// 512 CTAs (a sequence and KV head each): more than a wave of four-warp CTAs, less than one of
// two-warp ones, which these take on an H100.
TEST_F(AttentionTest, DecodeQwen3Batch64TwoWarpCtas) {
  run_case({32, 8, 128, 16, decode_batch(rng_, 64, 600)});
}
TEST_F(AttentionTest, DecodeQwen3MoeShapeBatch128TwoWarpCtas) {
  run_case({32, 4, 128, 16, decode_batch(rng_, 128, 300)});
}
TEST_F(AttentionTest, DecodeQwen3Batch128Contexts1000To2000) {
  std::vector<Seq> seqs = decode_batch(rng_, 128, 1000);
  for (Seq& s : seqs) s.kv_len += 1000;
  run_case({32, 8, 128, 16, seqs});
}
// Chunked prefill beside decodes, as in the 1000-in / 1000-out steady state: the decode rows
// (one split at this batch size) and the chunks are written by different kernels.
TEST_F(AttentionTest, MixedDecodesBesidePrefillChunksQwen3) {
  std::vector<Seq> seqs = decode_batch(rng_, 96, 1000);
  for (Seq& s : seqs) s.kv_len += 1000;
  seqs.insert(seqs.begin() + 40, {{300, 300}, {1, 1}});
  seqs.push_back({129, 700});
  run_case({32, 8, 128, 16, seqs});
}
// Few decode rows (split over many CTAs, merged by the combine pass, which must leave the
// chunks' rows alone) among chunks, with a window and sinks.
TEST_F(AttentionTest, MixedFewDecodesSplitSinksSlidingWindow) {
  run_case({64, 8, 64, 16, {{1, 3000}, {200, 200}, {1, 40}, {65, 2065}}, 128, true});
}
// One decode row beside one chunk: few enough sequences for the clustered merge, whose CTAs
// for the chunk's sequence must leave its rows to the prefill kernel.
TEST_F(AttentionTest, MixedOneDecodeBesideChunkClustered) {
  run_case({32, 8, 128, 16, {{1, 3000}, {200, 200}}});
}
// Head dims between the kernels' tile widths (64, 128, 256) run in the wider tile, zero-padded:
// prefill, and decode with one split or with split contexts merged by the combine kernel (the
// clustered merges serve exact widths only), with sinks and a sliding window.
TEST_F(AttentionTest, PrefillHeadDims32To240) {
  for (const int head_dim : {32, 48, 80, 96, 112, 144, 192, 240})
    run_case({8, 2, head_dim, 16, {{70, 70}, {1, 33}, {20, 150}}});
}
TEST_F(AttentionTest, DecodeHeadDims32To240) {
  for (const int head_dim : {32, 48, 80, 96, 112, 144, 192, 240}) {
    run_case({8, 2, head_dim, 16, decode_batch(rng_, 200, 300)});     // one split
    run_case({8, 4, head_dim, 16, decode_batch(rng_, 6, 500)});       // combine kernel
    run_case({16, 2, head_dim, 16, {{1, 3000}}});                     // many splits
    run_case({4, 1, head_dim, 16, {{1, 2000}, {1, 1500}}, 0, true});  // sinks
    run_case({8, 2, head_dim, 16, decode_batch(rng_, 3, 900), 128});  // window's few splits
  }
}
// 256 sequences x 8 KV heads fill the GPU with one split: the sink joins in the decode CTA.
TEST_F(AttentionTest, DecodeGptOssShapeSinksSlidingWindowBatch256) {
  run_case({64, 8, 64, 16, decode_batch(rng_, 256, 600), 128, true});
}

}  // namespace
}  // namespace hadron::test
