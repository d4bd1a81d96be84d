// MXFP4 MoE experts for decode-sized batches (up to kMoeMxfp4DecodeMaxTokens tokens) on tensor
// cores, the weights streamed through shared memory by bulk copies (bulk_copy.cuh).
//  - A tile is 16 weight rows (the mma's M) over all of K, copied as two halves of 8 rows with
//    their scale bytes into one of kMaxStages stage buffers: the bytes in flight are bounded
//    by shared memory, not registers (the register-ring kernels before these held 2 KB a warp
//    in flight and streamed at 1.2 TB/s under ncu).
//  - Warp-specialised blocks: a producer warp starts the copies and refills a stage once the
//    8 consumer warps have released it (mbarriers both ways); the consumers split each tile's K
//    and never wait on one another. gate_up: a one-wave grid of blocks, each taking an equal
//    run of the tiles of all (token, slot) pairs (a tile: 8 intermediates' gate and up rows of
//    the pair's expert); the producer sums each released tile's partial rows over the warps in
//    a fixed order and writes the activations. down: a block per 8 output columns of a token,
//    a tile the rows of two of its experts (8 each), weighted by the routing and summed over
//    the warps in a fixed order at the end (deterministic; no atomics).
//  - A warp takes a tile's 32-value scale blocks in turn: the 4 lanes of a quad decode the
//    block's 4 words of rows g and g + 8 (mxfp4_pairs: 11 operations for a word's 8 codes,
//    moe_weights.cuh) into two mmas, and the block's sums are scaled by its rows' factors
//    (exact powers of two) on the fp32 accumulators. The k order inside an mma
//    is free as long as A and B agree: the input rows are staged in shared memory as fp16
//    pairs (x[8w + i], x[8w + i + 4]), the pairs mxfp4_pairs decodes. gate_up: B's 8
//    columns all hold the tile's token's x, so every column of the result is the tile's
//    product; down: columns 0 and 1 hold the two experts' activation rows, read against rows
//    0..7 and 8..15.
// What each of these choices measured: docs/performance-notes.md, "MoE experts".
// Inputs are rounded to fp16 (exact for bf16 values of magnitude 2^-14..65504).
// Launched with PDL (launch.cuh): the routing and the inputs are read after pdl_wait(), except
// for down's first copies (see the kernel).
#include <cuda_fp16.h>

#include <algorithm>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/mma.cuh"
#include "backends/cuda/moe_grouped_gemm.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/moe_weights.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

// 8 consumer warps and one producer warp (moe_mxfp4_decode_kernel).
constexpr int kConsumerWarps = 8, kConsumerThreads = kConsumerWarps * 32;
constexpr int kThreads = kConsumerThreads + 32;
constexpr int kTileRows = 16;  // weight rows of a tile: the mma's M
constexpr int kMaxStages = 3;  // tile buffers in flight per block
// Resident blocks per SM and the dynamic shared memory each may use (with the static arrays
// and the 1 KB the runtime reserves, they fit an SM's 228 KB): at gpt-oss-20b's shapes two
// 24.5 KB stages beside the staged inputs. 3 blocks of 2 stages beat 2 blocks of 3 (gate_up's
// consumers are latency-bound: more warps hide more latency).
constexpr int kBlocksPerSm = 3;
constexpr size_t kBlockSharedBytes = 71 * 1024;

__device__ __forceinline__ uint32_t half2_bits_of(float lo, float hi) {
  const __half2 r = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&r);
}

// n_rows input rows x (k values each, contiguous), by the consumer threads, into shared memory
// as fp16 pairs in mxfp4_pairs' order, kStageBatch loads in flight per thread (down's four
// activation rows took eight L2 round trips one after another).
constexpr int kStageBatch = 8;
__device__ __forceinline__ void stage_rows(const bf16* x, int64_t n_rows, int64_t k,
                                           uint32_t* pairs) {
  batched<kConsumerThreads, kStageBatch, Bf16x8>(
      static_cast<int>(n_rows * k / 8), [&](int q, Bf16x8& v) { v = load8(x + q * 8); },
      [&](int q, const Bf16x8& v) {
        float f[8];
        to_f32(v, f);
        const uint4 words{half2_bits_of(f[0], f[4]), half2_bits_of(f[1], f[5]),
                          half2_bits_of(f[2], f[6]), half2_bits_of(f[3], f[7])};
        *reinterpret_cast<uint4*>(pairs + q * 4) = words;
      });
}

// A tile in shared memory: its 16 rows' codes (k / 2 bytes each), then their scale bytes
// (k / 32 each). Bulk copies need multiples of 16 bytes: k % 64 == 0.
struct TileLayout {
  int64_t k;
  __host__ __device__ int64_t row_bytes() const { return k / 2; }
  __host__ __device__ int n_blocks() const { return static_cast<int>(k / 32); }
  __host__ __device__ int64_t bytes() const { return kTileRows * (row_bytes() + n_blocks()); }
};

// Starts copying a tile whose rows 0..7 begin at weight row first[0] and rows 8..15 at
// first[1] into `stage`, completing on `barrier`.
__device__ __forceinline__ void start_tile(const TileLayout& layout, const uint8_t* codes,
                                           const uint8_t* scales, const int64_t (&first)[2],
                                           uint8_t* stage, uint64_t* barrier) {
  const int64_t row_bytes = layout.row_bytes(), n_blocks = layout.n_blocks();
  mbarrier_expect_bytes(barrier, static_cast<uint32_t>(layout.bytes()));
  for (int h = 0; h < 2; ++h) {
    bulk_copy_to_shared(stage + h * 8 * row_bytes, codes + first[h] * row_bytes,
                        static_cast<uint32_t>(8 * row_bytes), barrier);
    bulk_copy_to_shared(stage + kTileRows * row_bytes + h * 8 * n_blocks,
                        scales + first[h] * n_blocks, static_cast<uint32_t>(8 * n_blocks), barrier);
  }
}

// acc (the mma's C fragment: rows g and g + 8 in acc[0..1] and acc[2..3]) = this warp's blocks
// of the tile in `stage` times the input row x (fp16 pairs). A warp takes every
// kConsumerWarps-th 32-value block; lane (g, t) decodes word t of the block (codes 8t..8t+7)
// of rows g and g + 8 into the A fragments of two mmas, whose k order matches the staged
// pairs of x, and scales the block's sums by the rows' factors in fp32: 2^(scale - 127)
// (mxfp4_scale_unbiased), the 2^14 that mxfp4_pairs' values lack applied once at the end. The
// two mmas fill separate accumulators, so neither waits for the other: the loop is bound by
// its dependency chains, not its instruction count (the cheaper scales alone, or unrolling by
// 2 or 8, measured slower).
__device__ __forceinline__ void tile_products(const TileLayout& layout, const uint8_t* stage,
                                              const uint32_t* x, float (&acc)[4]) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int n_blocks = layout.n_blocks();
  const int64_t row_bytes = layout.row_bytes();
  const uint8_t* codes0 = stage + g * row_bytes + 4 * t;
  const uint8_t* codes1 = codes0 + 8 * row_bytes;
  const uint8_t* scales0 = stage + kTileRows * row_bytes + g * n_blocks;
  const uint8_t* scales1 = scales0 + 8 * n_blocks;
  const uint4* xs = reinterpret_cast<const uint4*>(x) + t;  // word 4b + t's pairs at xs[4b]
  float sum[4] = {};
#pragma unroll 4
  for (int b = warp; b < n_blocks; b += kConsumerWarps) {
    const uint32_t w0 = *reinterpret_cast<const uint32_t*>(codes0 + b * 16);
    const uint32_t w1 = *reinterpret_cast<const uint32_t*>(codes1 + b * 16);
    const uint4 pairs = xs[4 * b];
    uint32_t p0[4], p1[4];
    mxfp4_pairs(w0, p0);
    mxfp4_pairs(w1, p1);
    float c[4] = {}, d[4] = {};
    const uint32_t low[4] = {p0[0], p1[0], p0[1], p1[1]};
    mma_f16(c, low, pairs.x, pairs.y);
    const uint32_t high[4] = {p0[2], p1[2], p0[3], p1[3]};
    mma_f16(d, high, pairs.z, pairs.w);
    const float f0 = mxfp4_scale_unbiased(scales0[b]), f1 = mxfp4_scale_unbiased(scales1[b]);
    sum[0] += f0 * (c[0] + d[0]);
    sum[1] += f0 * (c[1] + d[1]);
    sum[2] += f1 * (c[2] + d[2]);
    sum[3] += f1 * (c[3] + d[3]);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) acc[i] = sum[i] * 16384.0f;
}

// Where tile `tile` of a block comes from: the first weight row of each of its 8-row halves,
// the pair each half serves and that pair's expert (-1 when the routing names none, or past
// top_k: the half reads expert 0's rows and counts for nothing).
//  - gate_up: both halves serve pair tile / (inter / 8), intermediates i0..i0+7 of it.
//  - down: half h is output columns 8 blockIdx.x.. of slot 2 tile + h of token blockIdx.y.
struct TileSource {
  int64_t first[2];
  int pair[2], expert[2];
};

template <bool kDown>
__device__ __forceinline__ TileSource tile_source(const MoeExpertsArgs& a, int tile) {
  TileSource source;
  auto routed = [&](int pair) {
    const int e = a.topk_ids[pair];
    return e >= 0 && e < a.n_experts ? e : -1;
  };
  if constexpr (kDown) {
    for (int h = 0; h < 2; ++h) {
      const int slot = 2 * tile + h;
      source.pair[h] = static_cast<int>(blockIdx.y) * a.top_k + min(slot, a.top_k - 1);
      source.expert[h] = slot < a.top_k ? routed(source.pair[h]) : -1;
      source.first[h] = std::max(source.expert[h], 0) * a.hidden + blockIdx.x * 8;
    }
  } else {
    const int tiles_per_pair = static_cast<int>(a.inter / 8), pair = tile / tiles_per_pair;
    const int e = routed(pair);
    const int64_t expert = std::max(e, 0), i0 = (tile - pair * tiles_per_pair) * 8;
    source.pair[0] = source.pair[1] = pair;
    source.expert[0] = source.expert[1] = e;
    source.first[0] = moe_gate_up_row(a, expert, i0, false);
    // Interleaved rows: intermediates i0..i0+3 then i0+4..i0+7; else the 8 gate rows, then up.
    source.first[1] = a.interleaved_clamped ? moe_gate_up_row(a, expert, i0 + 4, false)
                                            : moe_gate_up_row(a, expert, i0, true);
  }
  return source;
}

// Writes activation q (0..7) of gate_up tile `tile` from the consumer warps' partial rows,
// summed over the warps in order.
__device__ __forceinline__ void write_activation(const MoeExpertsArgs& a, int tile, int q,
                                                 const float (&partial)[kConsumerWarps][kTileRows],
                                                 bf16* activated) {
  const int tiles_per_pair = static_cast<int>(a.inter / 8), pair = tile / tiles_per_pair;
  const int64_t i = (tile - pair * tiles_per_pair) * 8 + q;
  const int e = a.topk_ids[pair];
  float value = 0;
  if (e >= 0 && e < a.n_experts) {
    const int gate_row = a.interleaved_clamped ? 2 * q : q;
    const int up_row = a.interleaved_clamped ? 2 * q + 1 : q + 8;
    float gate = moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, false));
    float up = moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, true));
    for (int w = 0; w < kConsumerWarps; ++w) {
      gate += partial[w][gate_row];
      up += partial[w][up_row];
    }
    value = moe_activate(a, gate, up);
  }
  activated[int64_t{pair} * a.inter + i] = __float2bfloat16(value);
}

// Per stage and use parity: each consumer warp's 16 partial rows of the tile.
using Partials = float[2][kMaxStages][kConsumerWarps][kTileRows];

// Starts copying the block's tile `tile` into stage `slot`.
template <bool kDown>
__device__ __forceinline__ void start(const MoeExpertsArgs& a, const TileLayout& layout, int tile,
                                      int slot, uint8_t* stages, uint64_t* full) {
  start_tile(layout, static_cast<const uint8_t*>(kDown ? a.down : a.gate_up),
             kDown ? a.down_scales : a.gate_up_scales, tile_source<kDown>(a, tile).first,
             stages + slot * layout.bytes(), &full[slot]);
}

// The producer warp: lane j starts tile j of the first n_stages (tile 0: down's already started
// by the kernel); then, as the consumers release each stage, lane 0 starts the stage's next tile
// and (gate_up) lanes 0..7 write the released tile's activations.
template <bool kDown>
__device__ __forceinline__ void produce(const MoeExpertsArgs& a, const TileLayout& layout,
                                        int first_tile, int n_tiles, int n_stages, uint8_t* stages,
                                        uint64_t* full, uint64_t* empty, Partials& partial,
                                        bf16* activated) {
  const int lane = threadIdx.x % 32;
  // A block requests its first tile alone and its other first stages once that tile has
  // landed: the grid's first burst of requests is n_stages times smaller, so every block's
  // first tile arrives sooner (measured for gate_up and for down, whose first burst competes
  // with gate_up's last tiles).
  const int first_tiles = std::min(n_stages, n_tiles);
  if (!kDown && lane == 0 && first_tiles > 0) start<kDown>(a, layout, first_tile, 0, stages, full);
  if (first_tiles > 1) {
    mbarrier_wait(&full[0], 0);
    if (lane >= 1 && lane < first_tiles)
      start<kDown>(a, layout, first_tile + lane, lane, stages, full);
  }
  // `done`: the tile the stage held. down has nothing to do for a released stage but refill
  // it, so its producer stops waiting once no tile is left to start.
  const int n_waits = kDown ? n_tiles - n_stages : n_tiles;
  for (int done = 0; done < n_waits; ++done) {
    const int slot = done % n_stages, use = done / n_stages % 2;
    mbarrier_wait(&empty[slot], use);
    if (lane == 0 && done + n_stages < n_tiles)
      start<kDown>(a, layout, first_tile + done + n_stages, slot, stages, full);
    if (!kDown && lane < 8)
      write_activation(a, first_tile + done, lane, partial[use][slot], activated);
  }
}

// A consumer warp: its share of every tile's K (tile_products); gate_up leaves the tile's
// partial rows for the producer, down sums its 8 columns over the tiles, weighted by the
// routing, and leaves them in partial[0][0].
template <bool kDown>
__device__ __forceinline__ void consume(const MoeExpertsArgs& a, const TileLayout& layout,
                                        int first_tile, int n_tiles, int n_stages,
                                        const uint8_t* stages, uint32_t* inputs, uint64_t* full,
                                        uint64_t* empty, Partials& partial, const bf16* activated) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t input_words = layout.k / 2;
  // The input rows: down token t's activation rows; gate_up the x rows of the tokens its tiles
  // serve (a run of tiles spans at most two tokens: launch_moe_mxfp4_decode), from first_token.
  const int tiles_per_token = static_cast<int>(a.top_k * (a.inter / 8));
  const int first_token = kDown ? 0 : first_tile / tiles_per_token;
  {
    const int64_t n_rows =
        kDown ? a.top_k : (first_tile + n_tiles - 1) / tiles_per_token - first_token + 1;
    const bf16* source = kDown ? activated + int64_t{blockIdx.y} * a.top_k * a.inter
                               : static_cast<const bf16*>(a.x) + first_token * layout.k;
    stage_rows(source, n_rows, layout.k, inputs);
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerThreads) : "memory");  // consumers only
  float acc[4] = {};
  for (int i = 0; i < n_tiles; ++i) {
    const int slot = i % n_stages, use = i / n_stages % 2;
    mbarrier_wait(&full[slot], use);
    const TileSource source = tile_source<kDown>(a, first_tile + i);
    // B's column n is lane group g's input row: gate_up every column the pair's token's x;
    // down column 0 half 0's activation row, column 1 half 1's (rows g and g + 8 of the
    // result: acc[0] row g by column 0, acc[3] row g + 8 by column 1).
    const int64_t input_row =
        kDown ? (g == 1 ? source.pair[1] : source.pair[0]) - static_cast<int>(blockIdx.y) * a.top_k
              : source.pair[0] / a.top_k - first_token;
    float tile_acc[4] = {};
    if (source.expert[0] >= 0 || source.expert[1] >= 0)
      tile_products(layout, stages + slot * layout.bytes(), inputs + input_row * input_words,
                    tile_acc);
    if constexpr (kDown) {
      const float w0 = source.expert[0] >= 0 ? a.topk_weights[source.pair[0]] : 0.0f;
      const float w1 = source.expert[1] >= 0 ? a.topk_weights[source.pair[1]] : 0.0f;
      acc[0] += w0 * tile_acc[0] + w1 * tile_acc[3];
    } else if (t == 0) {
      partial[use][slot][warp][g] = tile_acc[0];
      partial[use][slot][warp][g + 8] = tile_acc[2];
    }
    mbarrier_arrive(&empty[slot]);
  }
  if (kDown && t == 0) partial[0][0][warp][g] = acc[0];
}

// gate_up (kDown false): block b takes tiles [b n / grid, (b + 1) n / grid) of the n tiles
// of all pairs. down: block (x, t) takes the ceil(top_k / 2) tiles of output columns
// 8x..8x+7 of token t's experts, two experts a tile (8 rows each: a block per 16 columns of
// one expert a tile left 1.4 blocks per SM, and the SMs holding two set the pace), and writes
// out[t, 8x..8x+7] (+)= sum_j w_j (down_e_j . act_j + b). The last warp produces, the others
// consume.
template <bool kDown>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    moe_mxfp4_decode_kernel(MoeExpertsArgs a, bf16* activated, int n_stages) {
  extern __shared__ __align__(128) uint8_t shared[];
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages];
  __shared__ Partials partial;
  const TileLayout layout{kDown ? a.inter : a.hidden};
  auto* inputs = reinterpret_cast<uint32_t*>(shared + n_stages * layout.bytes());
  int first_tile = 0, n_tiles = (a.top_k + 1) / 2;
  if constexpr (!kDown) {
    const int64_t total = a.n_tokens * a.top_k * (a.inter / 8);
    first_tile = static_cast<int>(blockIdx.x * total / gridDim.x);
    n_tiles = static_cast<int>((blockIdx.x + 1) * total / gridDim.x) - first_tile;
  }
  if (threadIdx.x < n_stages) {
    mbarrier_init(&full[threadIdx.x], 1);
    mbarrier_init(&empty[threadIdx.x], kConsumerWarps * 32);
  }
  mbarrier_init_fence();
  __syncthreads();
  // down starts copying its first tile while gate_up finishes. This reads the routing before
  // pdl_wait(), which launch.cuh's contract allows only for memory no kernel of the step writes; it
  // is safe here because the routing comes from the kernel before gate_up, and every gate_up block
  // calls pdl_launch_dependents() only after its own pdl_wait(): when any down block runs, the
  // routing kernel has completed and its writes are visible.
  if (kDown && threadIdx.x == kConsumerThreads && n_tiles > 0)
    start<kDown>(a, layout, 0, 0, shared, full);
  pdl_wait();
  pdl_launch_dependents();
  if (threadIdx.x / 32 == kConsumerWarps)
    produce<kDown>(a, layout, first_tile, n_tiles, n_stages, shared, full, empty, partial,
                   activated);
  else
    consume<kDown>(a, layout, first_tile, n_tiles, n_stages, shared, inputs, full, empty, partial,
                   activated);
  if constexpr (kDown) {
    __syncthreads();  // the consumers' sums are in partial[0][0]
    if (threadIdx.x >= 8) return;
    const int r = threadIdx.x;
    const int64_t h = blockIdx.x * 8 + r;
    float value = 0;
    for (int w = 0; w < kConsumerWarps; ++w) value += partial[0][0][w][r];
    for (int s = 0; s < a.top_k; ++s) {
      const int e = a.topk_ids[blockIdx.y * a.top_k + s];
      if (e >= 0 && e < a.n_experts)
        value += a.topk_weights[blockIdx.y * a.top_k + s] *
                 moe_bias(a.down_bias, int64_t{e} * a.hidden + h);
    }
    auto* out = static_cast<bf16*>(a.out) + int64_t{blockIdx.y} * a.hidden + h;
    if (a.accumulate) value += __bfloat162float(*out);
    *out = __float2bfloat16(value);
  }
}

// Tile buffers that fit beside `input_bytes` of staged rows (0 when fewer than two do).
int stages_for(const TileLayout& layout, size_t input_bytes) {
  const size_t room = kBlockSharedBytes - std::min(kBlockSharedBytes, input_bytes);
  const auto n = static_cast<int>(std::min<size_t>(kMaxStages, room / layout.bytes()));
  return n >= 2 ? n : 0;
}

template <bool kDown>
void launch(const MoeExpertsArgs& args, bf16* activated, dim3 grid, int n_stages,
            size_t input_bytes, cudaStream_t stream) {
  const TileLayout layout{kDown ? args.inter : args.hidden};
  const size_t shared_bytes = n_stages * layout.bytes() + input_bytes;
  // Per launch, not once: the attribute belongs to the current device.
  CUDA_CHECK(cudaFuncSetAttribute(moe_mxfp4_decode_kernel<kDown>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kBlockSharedBytes)));
  launch_pdl(moe_mxfp4_decode_kernel<kDown>, grid, dim3(kThreads), shared_bytes, stream, args,
             activated, n_stages);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool launch_moe_mxfp4_decode(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                             cudaStream_t stream) {
  if (args.gate_up_scales == nullptr || args.n_tokens > kMoeMxfp4DecodeMaxTokens ||
      args.hidden % 64 != 0 || args.inter % 64 != 0 || !aligned16(args.gate_up) ||
      !aligned16(args.down) || !aligned16(args.gate_up_scales) || !aligned16(args.down_scales))
    return false;
  int device = 0, n_sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device));
  // gate_up: a block's run of ceil(n_tiles / blocks) tiles or fewer spans at most
  // ceil((run - 1) / tiles_per_token) + 1 tokens, whose x rows it stages (fp16 pairs: 2 bytes
  // a value); down: a token's activation rows.
  const int64_t tiles_per_token = args.top_k * (args.inter / 8);
  const int64_t n_tiles = args.n_tokens * tiles_per_token;
  const int64_t gate_up_blocks = std::min<int64_t>(n_tiles, int64_t{kBlocksPerSm} * n_sms);
  const int64_t run = ceil_div(n_tiles, gate_up_blocks);
  const int64_t x_rows = std::min(args.n_tokens, ceil_div(run - 1, tiles_per_token) + 1);
  const size_t x_bytes = x_rows * args.hidden * 2;
  const size_t activated_bytes = args.top_k * args.inter * 2;
  const int gate_up_stages = stages_for(TileLayout{args.hidden}, x_bytes);
  const int down_stages = stages_for(TileLayout{args.inter}, activated_bytes);
  if (gate_up_stages == 0 || down_stages == 0) return false;
  auto* activated = static_cast<bf16*>(workspace.activated);
  launch<false>(args, activated, dim3(static_cast<unsigned>(gate_up_blocks)), gate_up_stages,
                x_bytes, stream);
  launch<true>(args, activated,
               dim3(static_cast<unsigned>(args.hidden / 8), static_cast<unsigned>(args.n_tokens)),
               down_stages, activated_bytes, stream);
  return true;
}

}  // namespace hadron::cuda
