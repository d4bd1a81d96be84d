// Tensor-core grouped GEMMs for the experts of large batches (prefill, big decode batches),
// bf16 weights: the (token, slot) pairs are already sorted by expert (moe_align_kernel), and
// each CTA computes a 64-row x 128-column tile of one expert's product with mma.sync
// m16n8k16 (fp32 accumulation), K in steps of 64 through a 3-stage cp.async ring of swizzled
// shared-memory tiles.
//  - gate_up: A = the tile's token rows of x (gathered through sorted_pairs), B = 64 gate rows
//    and the 64 matching up rows of the expert, so each thread holds a gate and its up value
//    and the epilogue writes act(gate + b, up + b) straight into `activated`.
//  - down: A = rows of `activated` (sorted order), B = 128 rows of the expert's down matrix;
//    the epilogue writes expert_out (+ bias) for the combine kernel.
// CTA x-indices enumerate the tiles of the active experts in order (each CTA finds its expert
// with a block-wide scan of the experts' tile counts; indices past the last tile exit), so
// the grid needs no host synchronisation and serves CUDA graphs.
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/mma.cuh"
#include "backends/cuda/moe_grouped_gemm.cuh"
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

template <Product kProduct>
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
  const bf16* b_src[kBRowsPerThread];
#pragma unroll
  for (int i = 0; i < kBRowsPerThread; ++i) {
    const int j = row_in + i * kRowStride;
    if constexpr (kGateUp) {
      const int64_t idx = n0 + (j % (kBN / 2));
      b_src[i] = idx < a.inter ? static_cast<const bf16*>(a.gate_up) +
                                     moe_gate_up_row(a, e, idx, j >= kBN / 2) * a.hidden
                               : nullptr;
    } else {
      const int64_t row = n0 + j;
      b_src[i] = row < a.hidden ? static_cast<const bf16*>(a.down) + (e * a.hidden + row) * a.inter
                                : nullptr;
    }
  }

  const uint32_t base = smem_addr(smem);
  const int n_k_tiles = static_cast<int>((k_total + kBK - 1) / kBK);
  auto load_stage = [&](int kt) {
    const uint32_t a_tile = base + (kt % kStages) * kStageBytes, b_tile = a_tile + kATileBytes;
    const int64_t k = int64_t{kt} * kBK + chunk * 8;
    const bool k_ok = k < k_total;
#pragma unroll
    for (int i = 0; i < kARowsPerThread; ++i) {
      const bool ok = k_ok && a_src[i] != nullptr;
      cp_async16(a_tile + tile_offset<kChunks>(row_in + i * kRowStride, chunk),
                 ok ? a_src[i] + k : static_cast<const bf16*>(a.x), ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < kBRowsPerThread; ++i) {
      const bool ok = k_ok && b_src[i] != nullptr;
      cp_async16(b_tile + tile_offset<kChunks>(row_in + i * kRowStride, chunk),
                 ok ? b_src[i] + k : static_cast<const bf16*>(a.x), ok ? 16 : 0);
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

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_k_tiles) load_stage(s);
    cp_async_commit();
  }
  for (int kt = 0; kt < n_k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kt is in; stage kt - 1 is free for the next load
    if (kt + kStages - 1 < n_k_tiles) load_stage(kt + kStages - 1);
    cp_async_commit();
    const uint32_t a_tile = base + (kt % kStages) * kStageBytes, b_tile = a_tile + kATileBytes;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
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

template <Product kProduct>
void launch_product(const MoeExpertsArgs& a, const MoeWorkspace& w, cudaStream_t stream) {
  static const bool configured = [] {
    CUDA_CHECK(cudaFuncSetAttribute(moe_mma_kernel<kProduct>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)configured;
  const int64_t n_pairs = a.n_tokens * a.top_k;
  // At most ceil(rows / kBM) tiles per active expert: n_pairs / kBM + one per expert.
  const int64_t m_tiles = n_pairs / kBM + std::min<int64_t>(a.n_experts, n_pairs);
  const int64_t n_cols = kProduct == Product::kGateUp ? a.inter : a.hidden;
  const int64_t n_tiles = ceil_div(n_cols, kProduct == Product::kGateUp ? kBN / 2 : kBN);
  launch_pdl(moe_mma_kernel<kProduct>, dim3(m_tiles, n_tiles), dim3(kThreads), kSmemBytes, stream,
             a, w);
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
