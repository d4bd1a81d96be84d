// Tensor-core grouped GEMMs for the experts of large batches (prefill, big decode batches),
// bf16 or MXFP4 weights: the (token, slot) pairs are already sorted by expert
// (moe_align_kernel), and each CTA computes a 64-row x 128-column tile of one expert's product
// with mma.sync m16n8k16 (fp32 accumulation), K in steps of 64 through a 3-stage cp.async ring
// of swizzled shared-memory tiles (MXFP4 at decode batches: 6 stages, launch_product).
//  - gate_up: A = the tile's token rows of x (gathered through sorted_pairs), B = 64 gate rows
//    and the 64 matching up rows of the expert, so each thread holds a gate and its up value
//    and the epilogue writes act(gate + b, up + b) straight into `activated`.
//  - down: A = rows of `activated` (sorted order), B = 128 rows of the expert's down matrix;
//    the epilogue writes expert_out (+ bias) for the combine kernel.
//  - MXFP4 weights: the ring holds B's packed codes (32 bytes a row per k step) and the CTA's
//    scale bytes sit in shared memory for all of K (its 128 B rows are fixed); each k step,
//    thread t decodes row t's 64 values (moe_weights.cuh, times the block's scale: exact in
//    bf16) into one bf16 B tile the mma loop reads as it reads a bf16 stage.
// CTA x-indices enumerate the tiles of the active experts in order (each CTA finds its expert
// with a block-wide scan of the experts' tile counts; indices past the last tile exit), so
// the grid needs no host synchronisation and serves CUDA graphs.
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/mma.cuh"
#include "backends/cuda/moe_grouped_gemm.cuh"
#include "backends/cuda/moe_weights.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kBM = 64, kBN = 128, kBK = 64, kStages = 3;
constexpr int kWarps = 4, kThreads = kWarps * 32;
constexpr int kChunks = kBK / 8;  // 16-byte chunks per tile row (the swizzle needs 8)
constexpr int kATileBytes = kBM * kBK * 2, kBTileBytes = kBN * kBK * 2;
constexpr int kStageBytes = kATileBytes + kBTileBytes;
constexpr int kSmemBytes = kStages * kStageBytes;
constexpr int kARowsPerThread = kBM * kChunks / kThreads;  // 4
constexpr int kBRowsPerThread = kBN * kChunks / kThreads;  // 8
constexpr int kRowStride = kThreads / kChunks;             // 16 rows between a thread's rows
// MXFP4: a stage holds A and B's packed codes (kBN rows of kBK / 2 bytes); the decoded bf16 B
// tile and the scale bytes follow the ring. Thread t decodes B row t.
constexpr int kPackedRowBytes = kBK / 2;  // two 16-byte chunks of 32 codes, a scale each
constexpr int kPackedStageBytes = kATileBytes + kBN * kPackedRowBytes;
constexpr int kMaxSmemBytes = 200 * 1024;  // the attribute set once (MXFP4's scales grow with K)
constexpr int kDeepRing = 6;               // MXFP4's ring at decode batches (launch_product)
static_assert(kDeepRing * kPackedStageBytes + kBTileBytes + kBN * (kMoeMxfp4MaxK / 32) <=
              kMaxSmemBytes);
static_assert(kThreads == kBN, "MXFP4: a thread decodes one B row");

enum class Product { kGateUp, kDown };

struct Tile {
  int expert, row0, n_rows;
};

// The tile of CTA blockIdx.x: active experts in order, ceil(rows / kBM) tiles each.
// expert -1: past the last tile.
__device__ Tile find_tile(const MoeExpertsArgs& a, const MoeWorkspace& w) {
  __shared__ int thread_tiles[kThreads];
  __shared__ Tile found;
  const int n_active = w.active[a.n_experts];
  const int per_thread = (n_active + kThreads - 1) / kThreads;
  const int first = threadIdx.x * per_thread, last = min(n_active, first + per_thread);
  int mine = 0;
  for (int i = first; i < last; ++i) {
    const int e = w.active[i];
    mine += (w.offsets[e + 1] - w.offsets[e] + kBM - 1) / kBM;
  }
  thread_tiles[threadIdx.x] = mine;
  if (threadIdx.x == 0) found = {-1, 0, 0};
  __syncthreads();
  // Exclusive prefix of the threads before this one (kThreads is small: a plain loop).
  int before = 0;
  for (int t = 0; t < threadIdx.x; ++t) before += thread_tiles[t];
  const int target = blockIdx.x;
  if (target >= before && target < before + mine) {
    int skip = target - before;
    for (int i = first; i < last; ++i) {
      const int e = w.active[i], begin = w.offsets[e], rows = w.offsets[e + 1] - begin;
      const int tiles = (rows + kBM - 1) / kBM;
      if (skip < tiles) {
        found = {e, begin + skip * kBM, min(kBM, rows - skip * kBM)};
        break;
      }
      skip -= tiles;
    }
  }
  __syncthreads();
  return found;
}

// kRing: the stages of the cp.async ring (bf16: kStages).
template <Product kProduct, bool kMxfp4, int kRing>
__global__ void __launch_bounds__(kThreads) moe_mma_kernel(MoeExpertsArgs a, MoeWorkspace w) {
  extern __shared__ __align__(128) unsigned char smem[];
  pdl_wait();
  pdl_launch_dependents();
  const Tile tile = find_tile(a, w);
  if (tile.expert < 0) return;
  const int e = tile.expert;
  constexpr bool kGateUp = kProduct == Product::kGateUp;
  const int64_t k_total = kGateUp ? a.hidden : a.inter;
  // gate_up: intermediate indices n0..n0+63 (gate rows in B rows 0..63, up rows in 64..127);
  // down: output columns n0..n0+127.
  const int64_t n0 = blockIdx.y * int64_t{kGateUp ? kBN / 2 : kBN};
  const int64_t n_limit = kGateUp ? a.inter : a.hidden;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int chunk = threadIdx.x % kChunks, row_in = threadIdx.x / kChunks;

  // Source rows of this thread's cp.async copies (null: zero-fill).
  const bf16* a_src[kARowsPerThread];
#pragma unroll
  for (int i = 0; i < kARowsPerThread; ++i) {
    const int r = row_in + i * kRowStride;
    if (r >= tile.n_rows) {
      a_src[i] = nullptr;
    } else if constexpr (kGateUp) {
      const int pair = w.sorted_pairs[tile.row0 + r];
      a_src[i] = static_cast<const bf16*>(a.x) + int64_t{pair / a.top_k} * a.hidden;
    } else {
      a_src[i] = static_cast<const bf16*>(w.activated) + int64_t{tile.row0 + r} * a.inter;
    }
  }
  // Weight row j of the tile (gate_up: the gate rows, then the up rows), -1 past the matrix.
  const auto b_row = [&](int j) -> int64_t {
    if constexpr (kGateUp) {
      const int64_t idx = n0 + (j % (kBN / 2));
      return idx < a.inter ? moe_gate_up_row(a, e, idx, j >= kBN / 2) : -1;
    } else {
      return n0 + j < a.hidden ? e * a.hidden + n0 + j : -1;
    }
  };
  const void* b_matrix = kGateUp ? a.gate_up : a.down;
  const bf16* b_src[kBRowsPerThread];   // bf16
  const uint8_t* packed_src = nullptr;  // MXFP4: B row threadIdx.x's codes
  if constexpr (!kMxfp4) {
#pragma unroll
    for (int i = 0; i < kBRowsPerThread; ++i) {
      const int64_t row = b_row(row_in + i * kRowStride);
      b_src[i] = row >= 0 ? static_cast<const bf16*>(b_matrix) + row * k_total : nullptr;
    }
  }

  const uint32_t base = smem_addr(smem);
  constexpr int kRingStageBytes = kMxfp4 ? kPackedStageBytes : kStageBytes;
  const int n_k_tiles = static_cast<int>((k_total + kBK - 1) / kBK);
  // MXFP4: the decoded B tile, then row t's scale bytes at scales + t * n_scales.
  const int decoded_offset = kRing * kRingStageBytes;
  const uint32_t decoded_tile = base + decoded_offset;
  const int n_scales = static_cast<int>(k_total / 32);
  uint8_t* scales = smem + decoded_offset + kBTileBytes;
  if constexpr (kMxfp4) {
    const int64_t row = b_row(threadIdx.x);
    const uint8_t* row_scales =
        static_cast<const uint8_t*>(kGateUp ? a.gate_up_scales : a.down_scales);
    if (row >= 0) packed_src = static_cast<const uint8_t*>(b_matrix) + row * (k_total / 2);
    // Row t's scale bytes, 16 loads issued before their stores (a plain byte loop measured the
    // same).
    constexpr int kBatch = 16;
    for (int b0 = 0; b0 < n_scales; b0 += kBatch) {
      uint8_t batch[kBatch];
#pragma unroll
      for (int i = 0; i < kBatch; ++i)
        batch[i] = row >= 0 && b0 + i < n_scales ? __ldg(row_scales + row * n_scales + b0 + i) : 0;
#pragma unroll
      for (int i = 0; i < kBatch; ++i)
        if (b0 + i < n_scales) scales[threadIdx.x * n_scales + b0 + i] = batch[i];
    }
  }
  auto load_stage = [&](int kt) {
    const uint32_t a_tile = base + (kt % kRing) * kRingStageBytes, b_tile = a_tile + kATileBytes;
    const int64_t k = int64_t{kt} * kBK + chunk * 8;
    const bool k_ok = k < k_total;
#pragma unroll
    for (int i = 0; i < kARowsPerThread; ++i) {
      const bool ok = k_ok && a_src[i] != nullptr;
      cp_async16(a_tile + tile_offset<kChunks>(row_in + i * kRowStride, chunk),
                 ok ? a_src[i] + k : static_cast<const bf16*>(a.x), ok ? 16 : 0);
    }
    if constexpr (kMxfp4) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {  // 32 codes a chunk
        const int64_t first = int64_t{kt} * kBK + c * 32;
        const bool ok = packed_src != nullptr && first < k_total;
        cp_async16(b_tile + threadIdx.x * kPackedRowBytes + c * 16,
                   ok ? packed_src + first / 2 : static_cast<const void*>(a.x), ok ? 16 : 0);
      }
    } else {
#pragma unroll
      for (int i = 0; i < kBRowsPerThread; ++i) {
        const bool ok = k_ok && b_src[i] != nullptr;
        cp_async16(b_tile + tile_offset<kChunks>(row_in + i * kRowStride, chunk),
                   ok ? b_src[i] + k : static_cast<const bf16*>(a.x), ok ? 16 : 0);
      }
    }
  };
  // MXFP4: B row threadIdx.x of stage kt decoded into the bf16 tile (zero codes past K or the
  // matrix decode to zero).
  const auto decode_stage = [&](int kt) {
    const uint8_t* packed =
        smem + (kt % kRing) * kRingStageBytes + kATileBytes + threadIdx.x * kPackedRowBytes;
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int block = kt * 2 + c;
      const uint4 codes = *reinterpret_cast<const uint4*>(packed + c * 16);
      const float scale =
          block < n_scales ? mxfp4_scale(scales[threadIdx.x * n_scales + block]) : 0.0f;
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        float values[8];
        decode8<true>(codes, v, values);
#pragma unroll
        for (int i = 0; i < 8; ++i) values[i] *= scale;
        store8(reinterpret_cast<bf16*>(smem + decoded_offset +
                                       tile_offset<kChunks>(threadIdx.x, c * 4 + v)),
               from_f32(values));
      }
    }
  };

  // Warp (wm, wn) computes rows wm * 32.. (2 m16 tiles) and 8 n8 tiles: for gate_up, gate
  // columns wn * 32.. and the matching up columns 64 + wn * 32..; for down, wn * 64...
  const int wm = warp / 2, wn = warp % 2;
  auto b_row_of_pair = [&](int np) {  // first B row of n8 tiles 2 np, 2 np + 1
    if constexpr (kGateUp) return (np / 2) * (kBN / 2) + wn * 32 + (np % 2) * 16;
    return wn * 64 + np * 16;
  };
  float acc[2][8][4] = {};
  // A warp's m16 fragments past the tile's rows are neither loaded nor multiplied (their
  // outputs are never written): at decode batches most of a tile's 64 rows are empty, and the
  // kernel was bound by mma issue on them. Warp-uniform.
  const bool live[2] = {wm * 32 < tile.n_rows, wm * 32 + 16 < tile.n_rows};

#pragma unroll
  for (int s = 0; s < kRing - 1; ++s) {
    if (s < n_k_tiles) load_stage(s);
    cp_async_commit();
  }
  for (int kt = 0; kt < n_k_tiles; ++kt) {
    cp_async_wait<kRing - 2>();
    __syncthreads();  // stage kt is in; stage kt - 1 is free for the next load
    if (kt + kRing - 1 < n_k_tiles) load_stage(kt + kRing - 1);
    cp_async_commit();
    const uint32_t a_tile = base + (kt % kRing) * kRingStageBytes;
    uint32_t b_tile = a_tile + kATileBytes;
    if constexpr (kMxfp4) {
      decode_stage(kt);
      // The decoded tile is whole (the barrier above ordered the last step's mma reads of it
      // before this decode).
      __syncthreads();
      b_tile = decoded_tile;
    }
    if (!live[0]) continue;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
        if (live[mt])
          ldmatrix_x4(af[mt], a_tile + tile_offset<kChunks>(wm * 32 + mt * 16 + lane % 16,
                                                            kk * 2 + lane / 16));
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t bf[4];
        ldmatrix_x4(bf,
                    b_tile + tile_offset<kChunks>(b_row_of_pair(np) + (lane / 16) * 8 + lane % 8,
                                                  kk * 2 + (lane / 8) % 2));
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          if (!live[mt]) continue;
          mma_bf16(acc[mt][2 * np], af[mt], bf[0], bf[1]);
          mma_bf16(acc[mt][2 * np + 1], af[mt], bf[2], bf[3]);
        }
      }
    }
  }
  cp_async_wait<0>();

  // Fragment element q of n8 tile nt: row group + (q / 2) * 8, column quad * 2 + (q & 1).
  const int group = lane / 4, quad = lane % 4;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int r = wm * 32 + mt * 16 + group + (q / 2) * 8;
      if (r >= tile.n_rows) continue;
      const int64_t out_row = tile.row0 + r;
      if constexpr (kGateUp) {
        auto* activated = static_cast<bf16*>(w.activated);
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          const int64_t i = n0 + wn * 32 + nt * 8 + quad * 2 + (q & 1);
          if (i >= n_limit) continue;
          const float gate =
              acc[mt][nt][q] + moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, false));
          const float up =
              acc[mt][nt + 4][q] + moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, true));
          activated[out_row * a.inter + i] = __float2bfloat16(moe_activate(a, gate, up));
        }
      } else {
        auto* expert_out = static_cast<bf16*>(w.expert_out);
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const int64_t h = n0 + wn * 64 + nt * 8 + quad * 2 + (q & 1);
          if (h >= n_limit) continue;
          expert_out[out_row * a.hidden + h] =
              __float2bfloat16(acc[mt][nt][q] + moe_bias(a.down_bias, e * a.hidden + h));
        }
      }
    }
}

template <Product kProduct, bool kMxfp4, int kRing>
void launch_typed(const MoeExpertsArgs& a, const MoeWorkspace& w, cudaStream_t stream) {
  static const bool configured = [] {
    CUDA_CHECK(cudaFuncSetAttribute(moe_mma_kernel<kProduct, kMxfp4, kRing>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxSmemBytes));
    return true;
  }();
  (void)configured;
  const int64_t k_total = kProduct == Product::kGateUp ? a.hidden : a.inter;
  const size_t smem_bytes =
      kMxfp4 ? kRing * kPackedStageBytes + kBTileBytes + kBN * (k_total / 32) : kSmemBytes;
  if (smem_bytes > kMaxSmemBytes)  // moe.cpp keeps K within kMoeMxfp4MaxK
    fail_dispatch("moe grouped GEMM MXFP4 K", static_cast<int>(k_total),
                  {static_cast<int>(kMoeMxfp4MaxK)});
  const int64_t n_pairs = a.n_tokens * a.top_k;
  // At most ceil(rows / kBM) tiles per active expert: n_pairs / kBM + one per expert.
  const int64_t m_tiles = n_pairs / kBM + std::min<int64_t>(a.n_experts, n_pairs);
  const int64_t n_cols = kProduct == Product::kGateUp ? a.inter : a.hidden;
  const int64_t n_tiles = ceil_div(n_cols, kProduct == Product::kGateUp ? kBN / 2 : kBN);
  launch_pdl(moe_mma_kernel<kProduct, kMxfp4, kRing>, dim3(m_tiles, n_tiles), dim3(kThreads),
             smem_bytes, stream, a, w);
}

// MXFP4's ring: at decode batches (at most kDeepRingRowsPerExpert pairs an expert on
// average) an expert's tiles have few token rows, so a k step's work is short and the bytes in
// flight bound the stream: kDeepRing stages (at gpt-oss-20b's K, 2 CTAs an SM). With more rows, 3
// stages (3 CTAs an SM). Measured end to end, not in moe_ops_bench, which ranks them the other
// way (docs/performance-notes.md, "MoE experts").
constexpr int64_t kDeepRingRowsPerExpert = 8;

template <Product kProduct>
void launch_product(const MoeExpertsArgs& a, const MoeWorkspace& w, cudaStream_t stream) {
  if (a.gate_up_scales == nullptr) return launch_typed<kProduct, false, kStages>(a, w, stream);
  if (a.n_tokens * a.top_k <= kDeepRingRowsPerExpert * a.n_experts)
    return launch_typed<kProduct, true, kDeepRing>(a, w, stream);
  launch_typed<kProduct, true, kStages>(a, w, stream);
}

}  // namespace

void launch_moe_gate_up_mma(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                            cudaStream_t stream) {
  launch_product<Product::kGateUp>(args, workspace, stream);
}

void launch_moe_down_mma(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                         cudaStream_t stream) {
  launch_product<Product::kDown>(args, workspace, stream);
}

}  // namespace hadron::cuda
