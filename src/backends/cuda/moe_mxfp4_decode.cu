// MXFP4 MoE experts for decode-sized batches (up to kMoeSmallMaxTokens tokens) on tensor
// cores. The CUDA-core kernels (moe_experts.cu) spend most of their instructions turning
// decoded fp16 weights into fp32 and multiplying them out; here the decoded half2 words go
// straight into mma.sync m16n8k16 (fp16 in, fp32 accumulators), so a weight costs its decode
// (two shifts and two masks per pair of codes, moe_weights.cuh) and one fp16 multiply by its
// block's scale. gpt-oss-20b's experts at one token: 43.6 us against 50.1 for the CUDA-core
// kernels; batch-1 decode 422.0 tok/s against 388-390 (H100,
// bench/results/experiments-2026-11-26-s8.md).
//  - Tiles of 16 weight rows (the mma's M). gate_up: a warp owns one tile, 8 intermediate
//    rows of one (token, slot) pair's expert (gate rows, then up rows), over all of K, and
//    writes their activations. down: a block owns 16 output columns of one token over each of
//    its top_k experts (segments); its 8 warps split the segments and K, then sum their tiles
//    in shared memory in a fixed order (deterministic; no atomics).
//  - A warp step covers its tile's 16 rows over 4 scale blocks of 32 values: lane (g, t) of
//    the mma layout loads 16 bytes (block t of the step) of rows g and g + 8, so each lane
//    decodes whole blocks and applies its own block's scale before the product. The k order
//    inside an mma is free as long as A and B agree: the input rows are staged in shared
//    memory as fp16 pairs (x[8w + i], x[8w + i + 4]), the pairs mxfp4_pair_bits decodes.
//    kAhead steps of loads are in flight; addresses are set up once per tile and advanced
//    (indexing each step from scratch cost more instructions than the decode: 50 us).
//  - B's 8 columns all hold the same input row (one token per tile), so every column of the
//    result is the tile's product.
// The scale multiply is exact in fp16 for scale bytes 104..140 (weights of magnitude 2^-23 up
// to 2^13 times the e2m1 value); smaller scales round towards zero, beyond 2^13 overflows.
// Inputs are rounded to fp16 (exact for bf16 values of magnitude 2^-14..65504).
// Launched with PDL (launch.cuh): the routing and the inputs are read after pdl_wait().
#include <cuda_fp16.h>

#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/mma.cuh"
#include "backends/cuda/moe_grouped_gemm.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/moe_weights.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;
constexpr int kTileRows = 16;     // weight rows of a block: the mma's M
constexpr int kStepBlocks = 4;    // 32-value scale blocks per warp step, one per lane of a quad
constexpr int kMaxSegments = 32;  // top_k <= 32
constexpr int kAhead = 4;         // warp steps whose loads are in flight
constexpr int64_t kMaxStagedBytes = 96 * 1024;

__device__ __forceinline__ uint32_t hmul2_bits(uint32_t a, uint32_t b) {
  const __half2 r = __hmul2(*reinterpret_cast<const __half2*>(&a),
                            *reinterpret_cast<const __half2*>(&b));
  return *reinterpret_cast<const uint32_t*>(&r);
}

__device__ __forceinline__ uint32_t half2_bits_of(float lo, float hi) {
  const __half2 r = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&r);
}

// One block of 32 codes of one row and its scale byte, as loaded.
struct CodeBlock {
  uint4 codes;
  uint32_t scale;  // the e8m0 byte
};

// A loaded block ready to decode: pair h (codes 8 (h / 4) + h % 4 and that + 4) as half2
// bits, each value times the block's scale. Decoded values carry 2^-14, so the multiplier is
// 2^(s - 113) for the e8m0 byte s: one fp16 factor up to s = 128 (2^15), else 2^14 then
// 2^(s - 127) (infinite past s = 142); 0 below 2^-24.
struct ScaledBlock {
  uint4 codes;
  uint32_t first, second;  // the two factors as fp16 pairs

  __device__ __forceinline__ explicit ScaledBlock(const CodeBlock& b) : codes(b.codes) {
    const uint32_t s = b.scale;
    uint32_t h = 0, h2 = 15u << 10;  // 1.0
    if (s > 128) {
      h = 29u << 10;
      h2 = s > 142 ? 31u << 10 : (s - 112) << 10;
    } else if (s >= 99) {
      h = (s - 98) << 10;
    } else if (s >= 89) {
      h = 1u << (s - 89);
    }
    first = h * 0x10001u;
    second = h2 * 0x10001u;
  }
  template <bool kTwoFactors>
  __device__ __forceinline__ uint32_t pair(int h) const {
    const uint32_t word = h < 4 ? codes.x : h < 8 ? codes.y : h < 12 ? codes.z : codes.w;
    const uint32_t bits = hmul2_bits(mxfp4_pair_bits(word, h % 4), first);
    return kTwoFactors ? hmul2_bits(bits, second) : bits;
  }
  __device__ __forceinline__ bool two_factors() const { return second != 0x3C003C00u; }
};

// The input row x (k values) into shared memory as fp16 pairs in mxfp4_pair_bits' order.
__device__ __forceinline__ void stage_row(const bf16* x, int64_t k, uint32_t* pairs) {
  for (int64_t q = threadIdx.x; q < k / 8; q += kThreads) {
    float v[8];
    to_f32(load8(x + q * 8), v);
    const uint4 words{half2_bits_of(v[0], v[4]), half2_bits_of(v[1], v[5]),
                      half2_bits_of(v[2], v[6]), half2_bits_of(v[3], v[7])};
    *reinterpret_cast<uint4*>(pairs + q * 4) = words;
  }
}

// gate_up: warp w of block b owns tile 8b + w = (pair p, intermediate rows i0..i0+7) over
// the whole of K and writes activated[p, i0..i0+7] = act(gate . x_t + b, up . x_t + b).
// kDown: block (x, t) owns out[t, 16x .. 16x + 15] (+)= sum_j w_j (down_e_j . act_j + b); its
// warps split the top_k segments and K, then sum their tiles in shared memory.
template <bool kDown>
__global__ void __launch_bounds__(kThreads)
    moe_mxfp4_decode_kernel(MoeExpertsArgs a, bf16* activated) {
  extern __shared__ __align__(16) uint32_t staged[];
  __shared__ float partial[kWarps][kTileRows];
  // Per segment: expert (-1: none), routing weight, first tile row, staged input row.
  __shared__ int experts[kMaxSegments], first_rows[kMaxSegments], input_rows[kMaxSegments];
  __shared__ float weights[kMaxSegments];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t k_len = kDown ? a.inter : a.hidden;
  const int n_blocks = static_cast<int>(k_len / 32);
  const int n_segments = kDown ? a.top_k : kWarps;
  const int tiles_per_pair = static_cast<int>(a.inter / 8);
  const int n_tiles = static_cast<int>(a.n_tokens) * a.top_k * tiles_per_pair;
  pdl_wait();
  pdl_launch_dependents();
  if (threadIdx.x < n_segments) {
    const int s = threadIdx.x;
    int pair, first_row;
    if constexpr (kDown) {
      pair = blockIdx.y * a.top_k + s;
      first_row = blockIdx.x * kTileRows;
      input_rows[s] = s;
    } else {
      const int tile = blockIdx.x * kWarps + s;
      pair = tile < n_tiles ? tile / tiles_per_pair : -1;
      first_row = tile % tiles_per_pair * 8;
      input_rows[s] = pair < 0 ? 0 : pair / a.top_k;
    }
    const int e = pair < 0 ? -1 : a.topk_ids[pair];
    experts[s] = e >= 0 && e < a.n_experts ? e : -1;
    first_rows[s] = first_row;
    weights[s] = kDown ? a.topk_weights[pair] : 1.0f;
  }
  __syncthreads();

  // Row r (0..15) of segment s's tile.
  auto weight_row = [&](int s, int r) -> int64_t {
    const int e = experts[s];
    if constexpr (kDown) return int64_t{e} * a.hidden + first_rows[s] + r;
    return moe_gate_up_row(a, e, first_rows[s] + r % 8, r >= 8);
  };
  const auto* codes = static_cast<const uint8_t*>(kDown ? a.down : a.gate_up);
  const uint8_t* scales = kDown ? a.down_scales : a.gate_up_scales;

  // Work units (segment, slice of K), a warp taking every kWarps-th; steps of kStepBlocks.
  // gate_up: unit w = segment w, all of K. Addresses are set up once per unit and advanced
  // by a step's blocks (indexing per step cost more instructions than the decode).
  const int split = kDown && n_segments < kWarps ? kWarps / n_segments : 1;
  const int n_units = n_segments * split;
  const int unit_blocks = (n_blocks + split - 1) / split;

  {  // the input rows: gate_up every token's x, down t's act rows
    const int n_rows = kDown ? n_segments : static_cast<int>(a.n_tokens);
    const bf16* source = kDown ? activated + int64_t{blockIdx.y} * a.top_k * a.inter
                               : static_cast<const bf16*>(a.x);
    for (int r = 0; r < n_rows; ++r)
      stage_row(source + r * k_len, k_len, staged + r * (k_len / 2));
  }
  __syncthreads();

  float acc[4] = {};
  for (int unit = warp; unit < n_units; unit += kWarps) {
    const int segment = unit / split, slice = unit % split;
    if (experts[segment] < 0) continue;
    const int begin = slice * unit_blocks + t, end = min(n_blocks, (slice + 1) * unit_blocks);
    const int n_steps = (end - slice * unit_blocks + kStepBlocks - 1) / kStepBlocks;
    const int64_t row0 = weight_row(segment, g), row1 = weight_row(segment, g + 8);
    const uint4* w0 = reinterpret_cast<const uint4*>(codes + row0 * (k_len / 2)) + begin;
    const uint4* w1 = reinterpret_cast<const uint4*>(codes + row1 * (k_len / 2)) + begin;
    const uint8_t* s0 = scales + row0 * n_blocks + begin;
    const uint8_t* s1 = scales + row1 * n_blocks + begin;
    // Lanes past the unit's end load nothing (zero weights) and read any finite input block.
    const uint32_t* x = staged + input_rows[segment] * (k_len / 2) + begin * 16;
    const int lane_steps = begin < end ? (end - begin + kStepBlocks - 1) / kStepBlocks : 0;
    auto load = [&](int step, CodeBlock (&rows)[2]) {
      const int offset = step * kStepBlocks;
      if (step < lane_steps) {
        rows[0] = {load_weights(w0 + offset), s0[offset]};
        rows[1] = {load_weights(w1 + offset), s1[offset]};
      } else {
        rows[0] = rows[1] = {make_uint4(0, 0, 0, 0), 127};
      }
    };
    CodeBlock ring[kAhead][2];
#pragma unroll
    for (int i = 0; i < kAhead; ++i) load(i, ring[i]);
    float unit_acc[4] = {};
    for (int base = 0; base < n_steps; base += kAhead) {
#pragma unroll
      for (int i = 0; i < kAhead; ++i) {  // ring slots by constants, so they stay in registers
        const int step = base + i;
        if (step >= n_steps) break;
        const ScaledBlock r0(ring[i][0]), r1(ring[i][1]);
        load(step + kAhead, ring[i]);
        const uint32_t* xs = step < lane_steps ? x + step * kStepBlocks * 16 : staged;
        auto products = [&]<bool kTwo>() {
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const uint2 b = *reinterpret_cast<const uint2*>(xs + 2 * j);
            const uint32_t a[4] = {r0.pair<kTwo>(2 * j), r1.pair<kTwo>(2 * j),
                               r0.pair<kTwo>(2 * j + 1), r1.pair<kTwo>(2 * j + 1)};
        mma_f16(unit_acc, a, b.x, b.y);
          }
        };
        // mma.sync needs the whole warp: the variant is chosen per warp, not per lane.
        if (__any_sync(0xffffffffu, r0.two_factors() || r1.two_factors())) [[unlikely]]
          products.template operator()<true>();
        else
          products.template operator()<false>();
      }
    }
    const float w = weights[segment];
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] += w * unit_acc[c];
  }
  // Every column of the result holds the same products: column 0's rows g and g + 8.
  if constexpr (!kDown) {
    const int tile = blockIdx.x * kWarps + warp;
    if (t != 0 || tile >= n_tiles) return;
    const int e = experts[warp], pair = tile / tiles_per_pair;
    const int64_t i = first_rows[warp] + g;
    float value = 0;
    if (e >= 0)
      value = moe_activate(a, acc[0] + moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, false)),
                           acc[2] + moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, true)));
    activated[int64_t{pair} * a.inter + i] = __float2bfloat16(value);
  } else {
    if (t == 0) {
      partial[warp][g] = acc[0];
      partial[warp][g + 8] = acc[2];
    }
    __syncthreads();
    if (threadIdx.x >= kTileRows) return;
    const int r = threadIdx.x;
    const int64_t h = first_rows[0] + r;
    float value = 0;
    for (int w = 0; w < kWarps; ++w) value += partial[w][r];
    for (int s = 0; s < n_segments; ++s)
      if (experts[s] >= 0) value += weights[s] * moe_bias(a.down_bias, experts[s] * a.hidden + h);
    auto* out = static_cast<bf16*>(a.out) + int64_t{blockIdx.y} * a.hidden + h;
    if (a.accumulate) value += __bfloat162float(*out);
    *out = __float2bfloat16(value);
  }
}

template <bool kDown>
void launch(const MoeExpertsArgs& args, bf16* activated, dim3 grid, size_t staged_bytes,
            cudaStream_t stream) {
  // Per launch, not once: the attribute belongs to the current device.
  CUDA_CHECK(cudaFuncSetAttribute(moe_mxfp4_decode_kernel<kDown>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kMaxStagedBytes)));
  launch_pdl(moe_mxfp4_decode_kernel<kDown>, grid, dim3(kThreads), staged_bytes, stream, args,
             activated);
}

}  // namespace

bool launch_moe_mxfp4_decode(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                             cudaStream_t stream) {
  const int64_t n_pairs = args.n_tokens * args.top_k;
  const size_t x_bytes = args.n_tokens * args.hidden * sizeof(bf16);
  const size_t activated_bytes = args.top_k * args.inter * sizeof(bf16);
  if (args.gate_up_scales == nullptr || args.n_tokens > kMoeSmallMaxTokens ||
      args.top_k > kMaxSegments || args.hidden % kTileRows != 0 || args.inter % 32 != 0 ||
      args.hidden % 32 != 0 || std::max(x_bytes, activated_bytes) > kMaxStagedBytes)
    return false;
  auto* activated = static_cast<bf16*>(workspace.activated);
  const int64_t n_tiles = n_pairs * (args.inter / 8);
  launch<false>(args, activated, dim3(static_cast<unsigned>((n_tiles + kWarps - 1) / kWarps)),
                x_bytes, stream);
  launch<true>(args, activated,
               dim3(static_cast<unsigned>(args.hidden / kTileRows),
                    static_cast<unsigned>(args.n_tokens)),
               activated_bytes, stream);
  return true;
}

}  // namespace hadron::cuda
