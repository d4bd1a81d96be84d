// Causal grouped-query attention over the paged KV cache, FlashAttention-2 style.
//
// One CTA per (query tile, query head, sequence); 4 warps own 16 * kMTiles query rows each
// (two 16-row MMA tiles per warp reuse every K/V fragment loaded from shared memory twice,
// which halves shared-memory traffic per FLOP; head_dim 256 keeps one, for registers). K/V
// tiles of 64 keys are gathered from the paged cache through the block table with cp.async
// into two shared-memory stages (the next tile loads while this one computes). S = Q K^T and
// O += P V run on mma.sync m16n8k16 (bf16 in, fp32 accumulate); P stays in registers (the
// accumulator layout of S is the A-operand layout of P V). Softmax is online in fp32 with
// exp2. Query row i of sequence s sits at position kv_len - q_len + i and sees keys
// [max(0, pos - window + 1), pos], plus the head's sink logit in the denominator when given.
// kD is the tile width (64, 128 or 256); with kPadded a head_dim below it is zero-filled to it on
// load and stored at its own width (attention_tile_dim). Exact widths keep their own instance, so
// their code has no such checks.
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/mma.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kBlockN = 64, kWarps = 4, kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;

template <int kMTiles>
constexpr int block_m() {
  return kWarps * 16 * kMTiles;
}

template <int kD, int kMTiles>
constexpr size_t smem_bytes() {
  return size_t{block_m<kMTiles>() + 4 * kBlockN} * kD * 2;  // Q + two stages of K and V
}

// Loads a [kRows, kD] tile. Thread t always copies 16-byte chunk t % kChunks, of rows
// t / kChunks + j * (kThreads / kChunks), so each row's source (a block-table lookup for
// K/V) is computed once per thread and row. src_of(row) gives the row's start or null for a
// zero-filled row (cp.async still gets a valid address, `any`, of which it reads nothing);
// chunks at or past head_dim are zero-filled too.
template <int kD, int kRows, typename SrcOf>
__device__ __forceinline__ void load_tile(uint32_t tile, const bf16* any, int head_dim,
                                          SrcOf src_of) {
  constexpr int kChunks = kD / 8, kRowStep = kThreads / kChunks;
  static_assert(kThreads % kChunks == 0 && kRows % kRowStep == 0);
  const int chunk = threadIdx.x % kChunks;
  const bool in_head = head_dim == kD || chunk * 8 < head_dim;  // folds where exact
#pragma unroll
  for (int row = threadIdx.x / kChunks; row < kRows; row += kRowStep) {
    const bf16* src = in_head ? src_of(row) : nullptr;
    cp_async16(tile + tile_offset<kChunks>(row, chunk), src == nullptr ? any : src + chunk * 8,
               src == nullptr ? 0 : 16);
  }
}

// Loads K and V rows [n_start, n_start + kBlockN) of one KV head from the paged cache into
// their tiles; one block-table lookup per row serves both.
template <int kD>
__device__ __forceinline__ void load_kv_tiles(uint32_t k_tile, uint32_t v_tile, const bf16* k_cache,
                                              const bf16* v_cache, const int32_t* block_table,
                                              int block_size, int n_kv_heads, int kv_head,
                                              int head_dim, int n_start, int kv_len) {
  constexpr int kChunks = kD / 8, kRowStep = kThreads / kChunks;
  const int chunk = threadIdx.x % kChunks;
  const bool in_head = head_dim == kD || chunk * 8 < head_dim;  // folds where exact
#pragma unroll
  for (int row = threadIdx.x / kChunks; row < kBlockN; row += kRowStep) {
    const int key = n_start + row;
    const bool valid = in_head && key < kv_len;
    int64_t offset = 0;
    if (valid) {
      const int64_t slot = int64_t{block_table[key / block_size]} * block_size + key % block_size;
      offset = (slot * n_kv_heads + kv_head) * head_dim + chunk * 8;
    }
    const uint32_t dst = tile_offset<kChunks>(row, chunk);
    cp_async16(k_tile + dst, k_cache + offset, valid ? 16 : 0);
    cp_async16(v_tile + dst, v_cache + offset, valid ? 16 : 0);
  }
}

template <int kD, int kMTiles, bool kPadded>
__global__ void __launch_bounds__(kThreads)
    attention_prefill_kernel(AttentionArgs args, float scale_log2) {
  constexpr int kChunks = kD / 8, kBlockM = block_m<kMTiles>();
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t q_tile = smem_addr(smem);
  const uint32_t k_tiles = q_tile + kBlockM * kD * 2;
  const uint32_t v_tiles = k_tiles + 2 * kBlockN * kD * 2;
  constexpr uint32_t kStageBytes = kBlockN * kD * 2;

  const int seq = blockIdx.z, head = blockIdx.y;
  const int m_tile = gridDim.x - 1 - blockIdx.x;  // longest (latest) tiles first
  const int q_begin = args.cu_seqlens_q[seq];
  const int q_len = args.cu_seqlens_q[seq + 1] - q_begin;
  const int m_start = m_tile * kBlockM;
  if (m_start >= q_len || (args.split_by_q_len && q_len == 1)) return;
  const int kv_len = args.seq_lens_kv[seq];
  const int kv_head = head / (args.n_heads / args.n_kv_heads);
  const int head_dim = kPadded ? args.head_dim : kD;
  const int context = kv_len - q_len;  // keys before this step's first query
  const int pos_first = context + m_start;
  const int pos_last = context + min(m_start + kBlockM, q_len) - 1;
  const int window = args.sliding_window;
  const int key_begin = window > 0 ? max(0, pos_first - window + 1) / kBlockN * kBlockN : 0;
  const int key_end = min(kv_len, pos_last + 1);
  const int32_t* block_table = args.block_tables + int64_t{seq} * args.max_blocks_per_seq;
  const bf16* q = static_cast<const bf16*>(args.q);
  const bf16* k_cache = static_cast<const bf16*>(args.k_cache);
  const bf16* v_cache = static_cast<const bf16*>(args.v_cache);

  load_tile<kD, kBlockM>(q_tile, q, head_dim, [&](int row) -> const bf16* {
    const int i = m_start + row;
    return i < q_len ? q + (int64_t{q_begin + i} * args.n_heads + head) * head_dim : nullptr;
  });
  auto load_kv = [&](int stage, int n_start) {
    load_kv_tiles<kD>(k_tiles + stage * kStageBytes, v_tiles + stage * kStageBytes, k_cache,
                      v_cache, block_table, args.block_size, args.n_kv_heads, kv_head, head_dim,
                      n_start, kv_len);
  };
  load_kv(0, key_begin);
  cp_async_commit();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, quad = lane % 4;
  // This thread's rows: group and group + 8 of each of the warp's 16-row MMA tiles.
  const int warp_row = warp * 16 * kMTiles;  // in the CTA's tile
  const int row0 = m_start + warp_row + group;
  float o[kMTiles][kD / 8][4] = {};
  // A sink enters as one more key of logit `sink` and no value: the running max starts at it
  // and one thread of each quad counts its exp2(0) = 1 (the quad's sums are added at the end).
  float row_max[kMTiles][2], row_sum[kMTiles][2];
  const bool has_sink = args.sinks != nullptr;
  const float sink =
      has_sink ? __bfloat162float(static_cast<const bf16*>(args.sinks)[head]) * kLog2e : -FLT_MAX;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = sink;
      row_sum[mt][r] = has_sink && quad == 0 ? 1.0f : 0.0f;
    }

  const int n_tiles = (key_end - key_begin + kBlockN - 1) / kBlockN;
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int n_start = key_begin + tile * kBlockN;
    if (tile + 1 < n_tiles) {
      load_kv((tile + 1) & 1, n_start + kBlockN);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const uint32_t k_tile = k_tiles + (tile & 1) * kStageBytes;
    const uint32_t v_tile = v_tiles + (tile & 1) * kStageBytes;

    // S = Q K^T for the warp's rows x 64 keys: 8 n-tiles of 8 keys per MMA tile.
    float s[kMTiles][kBlockN / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
        ldmatrix_x4(a[mt], q_tile + tile_offset<kChunks>(warp_row + mt * 16 + lane % 16,
                                                         kk * 2 + lane / 16));
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        uint32_t b[4];
        ldmatrix_x4(b, k_tile + tile_offset<kChunks>(np * 16 + (lane / 16) * 8 + lane % 8,
                                                     kk * 2 + (lane / 8) % 2));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_bf16(s[mt][2 * np], a[mt], b[0], b[1]);
          mma_bf16(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
    // Mask where the tile crosses the diagonal, the end of the keys or the window's start.
    const bool needs_mask = n_start + kBlockN - 1 > pos_first || n_start + kBlockN > kv_len ||
                            (window > 0 && n_start < pos_last - window + 1);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kBlockN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = n_start + nt * 8 + quad * 2 + (e & 1);
          const int p = context + row0 + mt * 16 + (e / 2) * 8;
          const bool masked =
              needs_mask && (key > p || key >= kv_len || (window > 0 && key < p - window + 1));
          s[mt][nt][e] = masked ? -INFINITY : s[mt][nt][e] * scale_log2;
        }
        // Online softmax per row; each row is spread over the 4 threads of a quad.
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      float rescale[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kBlockN / 8; ++nt)
          tile_max = fmaxf(tile_max, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(row_max[mt][r], tile_max);
        rescale[r] = exp2f(row_max[mt][r] - new_max);
        row_max[mt][r] = new_max;
        float tile_sum = 0;
#pragma unroll
        for (int nt = 0; nt < kBlockN / 8; ++nt)
#pragma unroll
          for (int e = 2 * r; e < 2 * r + 2; ++e)
            tile_sum += s[mt][nt][e] = exp2f(s[mt][nt][e] - new_max);
        row_sum[mt][r] = row_sum[mt][r] * rescale[r] + tile_sum;
      }
#pragma unroll
      for (int dt = 0; dt < kD / 8; ++dt) {
        o[mt][dt][0] *= rescale[0];
        o[mt][dt][1] *= rescale[0];
        o[mt][dt][2] *= rescale[1];
        o[mt][dt][3] *= rescale[1];
      }
    }
    // O += P V: P's k-step kk is S's n-tiles 2kk and 2kk + 1.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        a[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kD / 16; ++dp) {
        uint32_t b[4];
        ldmatrix_x4_trans(b,
                          v_tile + tile_offset<kChunks>(kk * 16 + ((lane / 8) % 2) * 8 + lane % 8,
                                                        dp * 2 + lane / 16));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_bf16(o[mt][2 * dp], a[mt], b[0], b[1]);
          mma_bf16(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
    __syncthreads();
  }

  bf16* out = static_cast<bf16*>(args.out);
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[mt][r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);  // every lane, before exits
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int i = row0 + mt * 16 + r * 8;  // query index in the sequence
      if (i >= q_len) continue;
      const float inv = sum > 0 ? 1.0f / sum : 0.0f;
      bf16* dst = out + (int64_t{q_begin + i} * args.n_heads + head) * head_dim + quad * 2;
#pragma unroll
      for (int dt = 0; dt < kD / 8; ++dt)
        if (dt * 8 < head_dim)
          *reinterpret_cast<__nv_bfloat162*>(dst + dt * 8) =
              __floats2bfloat162_rn(o[mt][dt][2 * r] * inv, o[mt][dt][2 * r + 1] * inv);
    }
}

template <int kD, int kMTiles, bool kPadded>
void launch_with(const AttentionArgs& args, cudaStream_t stream) {
  constexpr size_t kSmem = smem_bytes<kD, kMTiles>();
  static bool configured = false;  // the attribute is per function, set once
  if (!configured) {
    CUDA_CHECK(cudaFuncSetAttribute(attention_prefill_kernel<kD, kMTiles, kPadded>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    configured = true;
  }
  const dim3 grid(ceil_div(args.max_q_len, block_m<kMTiles>()), args.n_heads, args.n_seqs);
  const float scale_log2 = args.scale * kLog2e;
  attention_prefill_kernel<kD, kMTiles, kPadded>
      <<<grid, kThreads, kSmem, stream>>>(args, scale_log2);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_attention_prefill(const AttentionArgs& args, cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  const int tile_dim = attention_tile_dim(args.head_dim);
  const bool padded = tile_dim != args.head_dim;
  switch (tile_dim) {
    case 64:
      return padded ? launch_with<64, 2, true>(args, stream)
                    : launch_with<64, 2, false>(args, stream);
    case 128:
      return padded ? launch_with<128, 2, true>(args, stream)
                    : launch_with<128, 2, false>(args, stream);
    default:
      return padded ? launch_with<256, 1, true>(args, stream)
                    : launch_with<256, 1, false>(args, stream);
  }
}

}  // namespace hadron::cuda
