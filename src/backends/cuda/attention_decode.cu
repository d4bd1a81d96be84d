// Decode attention (one query per sequence) over the paged cache: split-KV flash-decoding on tensor
// cores.
//
// Grid (split, kv_head, seq). A CTA serves all query heads of one KV head (the GQA group, rows of
// an m16 tile; rows past the group are zero) for one chunk of the context, so each K/V row is read
// once per group. Its kW warps (kWarps; 3 or 2 for some one-split launches) take the
// chunk's 16-key tiles in turn (tile j to warp j % kW); each warp streams its tiles through its
// own kRing-deep cp.async ring in shared memory, so kRing - 1 tiles per warp are always in
// flight with no CTA-wide barrier, and fetches the
// block-table entry of the tile it loads next one tile early. S = Q K^T and O += P V run on
// mma.sync m16n8k16 with P reused from the S accumulators (FA2). The warps merge their
// online-softmax states in shared memory at the end. Where one split covers the whole context the
// CTA writes the output; otherwise it writes (max, sum, unnormalised O) and a combine kernel merges
// the splits, or, where plan_n_splits gives kClusterFromSplits or more (one or two sequences, no
// short sliding window) or a few splits in less than a wave of CTAs (a short sliding window),
// the splits of a context form a thread-block cluster and merge through distributed shared
// memory, with no combine kernel. A head's sink logit joins the denominator where the output is
// written (once per head). kD is the tile width (64, 128 or 256); with kPadded a head_dim below
// it is zero-filled to it on load and written at its own width (attention_tile_dim), in the
// plain split and one-split launches only. Exact widths keep their own instances, so their code
// has no such checks.
#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/mma.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 4, kTileKeys = 16, kMaxGroup = kMaxAttentionGroup;
// The splits of a clustered launch: one cluster a context (see kClusterFromSplits).
constexpr int kClusterSplits = 8;
// A split covers at least one tile per warp.
constexpr int kMinKeysPerSplit = kWarps * kTileKeys;

// Ring depth per warp: 96 KB of K/V tiles per CTA at head_dim 128 (two CTAs per SM, 128 KB in
// flight per SM), 64 KB at 64 and 128 KB at 256.
template <int kD>
constexpr int kStages = kD == 64    ? 4
                        : kD == 128 ? 3
                                    : 2;
// Launches with one split per context (many sequences: a CTA per (KV head, sequence), of few
// tiles each) take a shallower ring at head_dim 128, 64 KB, so three CTAs fit an SM and one's
// prologue or merge leaves two streaming; split launches keep kStages (the same depth
// everywhere cost batch 1 0.2-0.8%; docs/performance-notes.md, "Decode attention").
template <int kD>
constexpr int kOneSplitStages = kD == 128 ? 2 : kStages<kD>;
// One-split launches at head_dim 128 choose their CTAs' width, 4, 3 or 2 warps
// (launch_one_split_128).
template <int kD>
constexpr int kTileBytes = kTileKeys* kD * 2;
template <int kD, int kRing, int kW = kWarps>
constexpr size_t kSharedBytes = size_t{kW} * kRing * 2 * kTileBytes<kD>;
// Clustered launches whose (KV head, sequence) has at most kPushElements output elements
// (group size x head_dim) merge by push (see attention_decode_kernel's kPush): each CTA's inbox
// past its ring holds, from every split, the output sums of the elements the CTA merges
// ([split][kMaxGroup * kD], only its share written), then every split's maxima and row sums
// ([split][kMaxGroup] each). Sized for kMaxGroup heads though at most kPushElements elements
// are written: at head_dim 128 the ring and this 33 KB inbox fit one CTA an SM, as measured;
// with an inbox of just kPushElements (17 KB, two CTAs an SM) batch 1 ran 15% slower (not
// profiled: likely the largest shared-memory carveout, which two such CTAs need).
constexpr int kPushElements = 512;
template <int kD>
constexpr size_t kInboxBytes = (size_t{kD} + 2) * kMaxGroup* kClusterSplits * sizeof(float);

// Splitting aims at kCtasPerSm CTAs per SM (8 warps: what the head_dim-128 rings of two 4-warp CTAs
// fill). The number of splits depends only on the batch's shape (never on context lengths), so a
// captured graph serves any contexts; each sequence divides its own keys among them.
constexpr int kCtasPerSm = 8 / kWarps;
// A sliding window bounds every context to sliding_window keys, so no more splits than that
// fills at kMinKeysPerSplit each: the rest would be empty CTAs (gpt-oss-20b's 128-key layers
// at batch 1 had 2 active splits in a cluster of 8).
int plan_n_splits(const AttentionArgs& args, int n_sms) {
  const int ctas = std::max(1, args.n_seqs * args.n_kv_heads);
  int n_splits = std::max(1, static_cast<int>(ceil_div(kCtasPerSm * n_sms, ctas)));
  if (args.sliding_window > 0)
    n_splits =
        std::min(n_splits, static_cast<int>(ceil_div(args.sliding_window, kMinKeysPerSplit)));
  return n_splits;
}

// Keys per split for a sequence of `keys` keys over n_splits splits (whole tiles); splits past the
// last key are empty (split 0 always runs, so an empty context still writes its zero output).
__device__ __forceinline__ int split_chunk(int keys, int n_splits) {
  const int chunk = max(kMinKeysPerSplit, (keys + n_splits - 1) / n_splits);
  return (chunk + kTileKeys - 1) / kTileKeys * kTileKeys;
}
__device__ __forceinline__ int active_splits(int keys, int chunk) {
  return max(1, (keys + chunk - 1) / chunk);
}

constexpr float kLog2e = 1.4426950408889634f;

// The head's sink logit in the exp2 domain, or -inf without sinks (adding exp2(-inf) = 0). It joins
// the denominator once: where the output is written, never per split.
__device__ __forceinline__ float sink_log2(const AttentionArgs& args, int head) {
  return args.sinks != nullptr
             ? __bfloat162float(static_cast<const bf16*>(args.sinks)[head]) * kLog2e
             : -INFINITY;
}

// One warp's online-softmax state for its row of the m16 tile (lane / 4: a head of the group), over
// the keys of the tiles it computed. o: [kD / 8 n8 tiles][4] accumulators (c0, c1: this row, dims n
// * 8 + 2 (lane % 4) + {0, 1}; c2, c3: padding rows 8..15, always zero).
template <int kD>
struct WarpState {
  float o[kD / 8][4];
  float m = -INFINITY, l = 0;  // l: this lane's share of the row sum
};

// S = Q K^T for one 16-key tile, then the online-softmax update and O += P V. k_tile, v_tile:
// shared addresses of swizzled [16 keys, kD] tiles; key0: the tile's first key; keys at or past
// `end` are masked (their K/V rows were zero-filled).
template <int kD>
__device__ __forceinline__ void attend_tile(WarpState<kD>& st, const uint32_t (&qa)[kD / 16][2],
                                            uint32_t k_tile, uint32_t v_tile, int key0, int end,
                                            float scale_log2) {
  constexpr int kChunks = kD / 8;
  const int lane = threadIdx.x % 32;
  float s[2][4] = {};
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    uint32_t b[4];
    ldmatrix_x4(b,
                k_tile + tile_offset<kChunks>((lane / 16) * 8 + lane % 8, 2 * ks + (lane / 8) % 2));
    const uint32_t a[4] = {qa[ks][0], 0u, qa[ks][1], 0u};
    mma_bf16(s[0], a, b[0], b[1]);
    mma_bf16(s[1], a, b[2], b[3]);
  }
  // This lane's keys: n * 8 + 2 (lane % 4) + e; the quad (lane ^ 1, lane ^ 2) holds the rest of the
  // row. The tile's first key is valid, so the row maximum is finite.
  const int key = key0 + 2 * (lane % 4);
  float tile_max = -INFINITY;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      s[n][e] = key + n * 8 + e < end ? s[n][e] * scale_log2 : -INFINITY;
      tile_max = fmaxf(tile_max, s[n][e]);
    }
  }
  tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
  tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
  const float new_max = fmaxf(st.m, tile_max);
  const float rescale = exp2f(st.m - new_max);
  st.m = new_max;
  float p[2][2];
  float sum = 0;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      p[n][e] = exp2f(s[n][e] - new_max);
      sum += p[n][e];
    }
  }
  st.l = st.l * rescale + sum;
#pragma unroll
  for (int n = 0; n < kD / 8; ++n) {
    st.o[n][0] *= rescale;
    st.o[n][1] *= rescale;
  }
  const uint32_t pa[4] = {pack_bf16(p[0][0], p[0][1]), 0u, pack_bf16(p[1][0], p[1][1]), 0u};
#pragma unroll
  for (int dn = 0; dn < kD / 16; ++dn) {
    uint32_t b[4];
    ldmatrix_x4_trans(
        b, v_tile + tile_offset<kChunks>(((lane / 8) % 2) * 8 + lane % 8, 2 * dn + lane / 16));
    mma_bf16(st.o[2 * dn], pa, b[0], b[1]);
    mma_bf16(st.o[2 * dn + 1], pa, b[2], b[3]);
  }
}

// One output element's state from each of a cluster's splits: maximum, row sum, output sum.
struct SplitStates {
  float m[kClusterSplits], l[kClusterSplits], o[kClusterSplits];
};

// Online-softmax states merged with the head's sink (-inf without one): their common maximum,
// and the row sums and output sums rescaled to it, added in state order. The warps' merge, the
// cluster's and the combine kernel all merge with this arithmetic, so the paths agree bit for
// bit. max_of(i): state i's maximum; sums_of(i): its (row sum, output sum). kBound: a
// compile-time bound on n (the loops unrolled), 0 for none.
struct MergedState {
  float max, sum, acc;
  __device__ __forceinline__ bf16 output() const {
    return __float2bfloat16(sum > 0 ? acc / sum : 0.0f);
  }
};
template <int kBound, typename MaxOf, typename SumsOf>
__device__ __forceinline__ MergedState merge_states(int n, float sink, const MaxOf& max_of,
                                                    const SumsOf& sums_of) {
  const auto each = [&](const auto& f) {
    if constexpr (kBound > 0) {
#pragma unroll
      for (int i = 0; i < kBound; ++i) {
        if (i >= n) break;
        f(i);
      }
    } else {
      for (int i = 0; i < n; ++i) f(i);
    }
  };
  MergedState r{fmaxf(-FLT_MAX, sink), 0.0f, 0.0f};
  each([&](int i) { r.max = fmaxf(r.max, max_of(i)); });
  r.sum = exp2f(sink - r.max);
  each([&](int i) {
    const float w = exp2f(max_of(i) - r.max);
    const float2 sums = sums_of(i);
    r.sum += sums.x * w;
    r.acc += sums.y * w;
  });
  return r;
}

// kCluster: the grid's splits of a (KV head, sequence) form one thread-block cluster, and merge
// through distributed shared memory instead of the combine kernel. The merge spreads the
// elements (group_size x kD) over the active CTAs, kThreads consecutive elements to one CTA in
// turn. Pull (kPush false): every CTA leaves its merged state in its own shared memory; after a
// cluster barrier each reads its elements' states from every CTA, and a second barrier keeps
// that memory alive until read. Push (kPush, at most kPushElements elements): every CTA writes
// each element's state straight into the inbox of the CTA that merges it; after one barrier each
// merges from its own memory and leaves. Push wins at up to kPushElements elements and loses on
// long prompts above (Qwen3-30B-A3B's 1,024 elements pull; docs/performance-notes.md).
template <int kD, int kRing, bool kCluster, int kW = kWarps, bool kPush = false,
          bool kPadded = false>
__global__ void __launch_bounds__(kW * 32)
    attention_decode_kernel(AttentionArgs args, float scale_log2, float* partial) {
  static_assert(!kPush || kCluster);
  constexpr int kChunks = kD / 8, kThreads = kW * 32;
  extern __shared__ __align__(128) unsigned char smem[];
  const int split = blockIdx.x, kv_head = blockIdx.y, seq = blockIdx.z;
  const int group_size = args.n_heads / args.n_kv_heads;
  const int head_dim = kPadded ? args.head_dim : kD;
  const int kv_len = args.seq_lens_kv[seq];
  const int first = args.sliding_window > 0 ? max(0, kv_len - args.sliding_window) : 0;
  // This sequence's keys in chunks of whole tiles; the splits past its last key return at once and
  // the combine pass skips them.
  const int chunk = split_chunk(kv_len - first, gridDim.x);
  const bool mine =
      !args.split_by_q_len || args.cu_seqlens_q[seq + 1] - args.cu_seqlens_q[seq] == 1;
  const int n_active = active_splits(kv_len - first, chunk);
  const bool active = mine && split < n_active;
  const int begin = first + split * chunk, end = min(kv_len, begin + chunk);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // Loading a tile: each cp.async instruction copies whole rows (kLanesPerRow lanes x 16 bytes,
  // 128-byte lines complete in one request), kRowsPerLoad keys at a time. Lane k < 16 resolves
  // key k's cache slot, and the lanes that copy that key's row read it by shuffle.
  constexpr int kLanesPerRow = kChunks < 32 ? kChunks : 32, kRowsPerLoad = 32 / kLanesPerRow;
  const int64_t slot_elems = int64_t{args.n_kv_heads} * head_dim;
  const bf16* k_cache = static_cast<const bf16*>(args.k_cache) + kv_head * head_dim;
  const bf16* v_cache = static_cast<const bf16*>(args.v_cache) + kv_head * head_dim;
  const int32_t* block_table = args.block_tables + int64_t{seq} * args.max_blocks_per_seq;
  const int n_chunk_tiles = (end - begin + kTileKeys - 1) / kTileKeys;
  const int n_tiles = n_chunk_tiles > warp ? (n_chunk_tiles - warp + kW - 1) / kW : 0;
  const int slot_key = lane % kTileKeys;
  auto tile_key0 = [&](int j) { return begin + (j * kW + warp) * kTileKeys; };
  // The block-table entry of key lane % 16 of this warp's tile j, or -1 past the end.
  auto page_of = [&](int j) {
    const int key = tile_key0(j) + slot_key;
    return j < n_tiles && key < end ? block_table[key / args.block_size] : -1;
  };
  const uint32_t ring = smem_addr(smem + warp * kRing * 2 * kTileBytes<kD>);
  auto stage_addr = [&](int j) { return ring + (j % kRing) * 2 * kTileBytes<kD>; };
  auto load_tile = [&](int j, int page) {
    if (j < n_tiles) {  // uniform over the warp
      const int key = tile_key0(j) + slot_key;
      const int slot = page >= 0 ? page * args.block_size + key % args.block_size : -1;
      const uint32_t k_dst = stage_addr(j), v_dst = k_dst + kTileBytes<kD>;
      const int chunk = lane % kLanesPerRow;
#pragma unroll
      for (int r0 = 0; r0 < kTileKeys; r0 += kRowsPerLoad) {
        const int r = r0 + lane / kLanesPerRow;
        const int row_slot = __shfl_sync(0xffffffffu, slot, r);
        const int64_t offset = row_slot >= 0 ? int64_t{row_slot} * slot_elems + chunk * 8 : 0;
#pragma unroll
        for (int c = chunk; c < kChunks; c += kLanesPerRow) {
          // Zero-fill rows past the end and dims past the head.
          const bool copied = row_slot >= 0 && c * 8 < head_dim;
          const int64_t src = copied ? offset + (c - chunk) * 8 : 0;
          cp_async16(k_dst + tile_offset<kChunks>(r, c), k_cache + src, copied ? 16 : 0);
          cp_async16(v_dst + tile_offset<kChunks>(r, c), v_cache + src, copied ? 16 : 0);
        }
      }
    }
    cp_async_commit();
  };

  // Before the wait (launch.cuh): context lengths, query offsets and block tables are the step's
  // inputs, in place since the step's first kernels, so the CTA can resolve its first tiles and
  // prefetch their K/V rows into L2 while the kernel before it (which writes q and this step's K/V
  // row) finishes. A prefetch returns no data: the loads after the wait read what L2 then holds,
  // this step's row included.
  int pages[kRing - 1];
#pragma unroll
  for (int j = 0; j < kRing - 1; ++j) {
    pages[j] = active ? page_of(j) : -1;
    if (pages[j] < 0) continue;
    const int key = tile_key0(j) + slot_key;
    const int64_t slot = int64_t{pages[j]} * args.block_size + key % args.block_size;
    const char* row_bytes =
        reinterpret_cast<const char*>((lane < kTileKeys ? k_cache : v_cache) + slot * slot_elems);
#pragma unroll
    for (int b = 0; b < kD * 2; b += 128)
      if (b < head_dim * 2) prefetch_l2(row_bytes + b);
  }
  const int token = args.cu_seqlens_q[seq];
  // Clustered splits of a context more than one split covers meet at two cluster barriers (every
  // CTA, active or not: whether to meet is the same for the whole cluster). Push: the first
  // phase only says that every CTA has started (its inbox may be written), arrived at here and
  // waited for before the first push; the second follows the pushes. An inactive CTA merges
  // nothing, so nothing is pushed to it: it arrives and leaves (barriers count the CTAs that
  // have not exited).
  const bool meet = kCluster && mine && n_active > 1;
  if constexpr (kPush)
    if (meet) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  pdl_wait();
  pdl_launch_dependents();
  if (!active) {
    if (meet && !kPush) {
      cooperative_groups::this_cluster().sync();
      cooperative_groups::this_cluster().sync();
    }
    return;
  }

  // Q as the A operand, pre-split per k-step: row lane / 4 (a head of the group, zero past it),
  // dims 16 ks + 2 (lane % 4) + {0, 1} and + 8.
  const int row = lane / 4;
  uint32_t qa[kD / 16][2];
  {
    const bf16* q = static_cast<const bf16*>(args.q) +
                    (int64_t{token} * args.n_heads + kv_head * group_size + row) * head_dim +
                    2 * (lane % 4);
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      const bool in_head = row < group_size && ks * 16 < head_dim;
      qa[ks][0] = in_head ? *reinterpret_cast<const uint32_t*>(q + ks * 16) : 0u;
      qa[ks][1] = in_head ? *reinterpret_cast<const uint32_t*>(q + ks * 16 + 8) : 0u;
    }
  }

  WarpState<kD> st;
#pragma unroll
  for (int n = 0; n < kD / 8; ++n) st.o[n][0] = st.o[n][1] = st.o[n][2] = st.o[n][3] = 0;
#pragma unroll
  for (int j = 0; j < kRing - 1; ++j) load_tile(j, pages[j]);
  int next_page = page_of(kRing - 1);
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<kRing - 2>();
    __syncwarp();  // tile j has landed for every lane; tile j - 1's stage is free
    load_tile(j + kRing - 1, next_page);
    next_page = page_of(j + kRing);
    attend_tile<kD>(st, qa, stage_addr(j), stage_addr(j) + kTileBytes<kD>, tile_key0(j), end,
                    scale_log2);
  }
  cp_async_wait<0>();
  st.l += __shfl_xor_sync(0xffffffffu, st.l, 1);
  st.l += __shfl_xor_sync(0xffffffffu, st.l, 2);

  // Merge the warps: [kW][kMaxGroup] rows of kD floats, maxima and sums, over the ring.
  static_assert(kW * kMaxGroup * (kD + 2) * sizeof(float) <= kSharedBytes<kD, kRing, kW>);
  float* slot_o = reinterpret_cast<float*>(smem);
  float* slot_m = slot_o + kW * kMaxGroup * kD;
  float* slot_l = slot_m + kW * kMaxGroup;
  // kCluster: this CTA's merged state per head of the group, read by the cluster's merge.
  float* cta_o = slot_l + kW * kMaxGroup;
  float* cta_m = cta_o + kMaxGroup * kD;
  float* cta_l = cta_m + kMaxGroup;
  static_assert((kW + 1) * kMaxGroup * (kD + 2) * sizeof(float) <= kSharedBytes<kD, kRing, kW>);
  __syncthreads();  // every warp is done with its ring
  if (row < group_size) {
    float* o_row = slot_o + (warp * kMaxGroup + row) * kD + 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < kD / 8; ++n)
      *reinterpret_cast<float2*>(o_row + n * 8) = make_float2(st.o[n][0], st.o[n][1]);
    if (lane % 4 == 0) {
      slot_m[warp * kMaxGroup + row] = st.m;
      slot_l[warp * kMaxGroup + row] = st.l;
    }
  }
  __syncthreads();
  float* inbox = reinterpret_cast<float*>(smem + kSharedBytes<kD, kRing, kW>);  // push only
  float* inbox_m = inbox + kClusterSplits * kMaxGroup * kD;                     // then the row sums
  if constexpr (kPush)
    if (meet) asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
  // A context that one split covers is written here; the combine pass skips it.
  const int n_splits = gridDim.x;
  const bool single = n_active == 1;
  for (int idx = threadIdx.x; idx < group_size * kD; idx += kThreads) {
    const int g = idx / kD, d = idx % kD;
    const int head = kv_head * group_size + g;
    const float sink = single ? sink_log2(args, head) : -INFINITY;
    const MergedState merged = merge_states<kW>(
        kW, sink, [&](int w) { return slot_m[w * kMaxGroup + g]; },
        [&](int w) {
          return make_float2(slot_l[w * kMaxGroup + g], slot_o[(w * kMaxGroup + g) * kD + d]);
        });
    if (single) {
      if (d < head_dim)
        static_cast<bf16*>(args.out)[(int64_t{token} * args.n_heads + head) * head_dim + d] =
            merged.output();
    } else if (kPush) {
      // Element idx's state to the CTA that merges it; the row's maximum and sum to every one.
      cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
      const int owner = (idx / kThreads) % n_active;
      cluster.map_shared_rank(inbox, owner)[split * kMaxGroup * kD + idx] = merged.acc;
      if (d == 0) {
        for (int r = 0; r < n_active; ++r) {
          float* stats = cluster.map_shared_rank(inbox_m, r);
          stats[split * kMaxGroup + g] = merged.max;
          stats[(kClusterSplits + split) * kMaxGroup + g] = merged.sum;
        }
      }
    } else if (kCluster) {
      cta_o[idx] = merged.acc;
      if (d == 0) {
        cta_m[g] = merged.max;
        cta_l[g] = merged.sum;
      }
    } else {
      const int64_t out_row = (int64_t{seq} * args.n_heads + head) * n_splits + split;
      partial[out_row * (kD + 2) + d] = merged.acc;
      if (d == 0) {
        partial[out_row * (kD + 2) + kD] = merged.max;
        partial[out_row * (kD + 2) + kD + 1] = merged.sum;
      }
    }
  }
  if (!meet) return;
  // The cluster's merge: this CTA's elements, each from every active CTA's state (read(sp, g,
  // idx, states, sp) fills states' entry sp), merged with the combine kernel's arithmetic.
  const auto merge_elements = [&](const auto& read) {
    for (int idx = split * kThreads + threadIdx.x; idx < group_size * kD;
         idx += n_active * kThreads) {
      const int g = idx / kD, d = idx % kD;
      if (d >= head_dim) continue;
      const int head = kv_head * group_size + g;
      SplitStates states;
#pragma unroll
      for (int sp = 0; sp < kClusterSplits; ++sp) {
        if (sp >= n_active) break;
        read(sp, g, idx, states);
      }
      static_cast<bf16*>(args.out)[(int64_t{token} * args.n_heads + head) * head_dim + d] =
          merge_states<kClusterSplits>(
              n_active, sink_log2(args, head), [&](int sp) { return states.m[sp]; },
              [&](int sp) { return make_float2(states.l[sp], states.o[sp]); })
              .output();
    }
  };
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // push: every push has landed; pull: every CTA's state is in its memory
  if constexpr (kPush) {
    merge_elements([&](int sp, int g, int idx, SplitStates& states) {
      states.m[sp] = inbox_m[sp * kMaxGroup + g];
      states.l[sp] = inbox_m[(kClusterSplits + sp) * kMaxGroup + g];
      states.o[sp] = inbox[sp * kMaxGroup * kD + idx];
    });
    return;
  }
  // Pull: each thread first reads every active CTA's (m, l, o) for its element, all requests
  // in flight at once (a distributed-shared-memory read is a round trip of its own: one after
  // another they took ~1.7 us of a batch-1 layer, clock64 stamps). The second barrier keeps
  // every CTA's memory alive until it is read.
  merge_elements([&](int sp, int g, int idx, SplitStates& states) {
    states.m[sp] = cluster.map_shared_rank(cta_m, sp)[g];
    states.l[sp] = cluster.map_shared_rank(cta_l, sp)[g];
    states.o[sp] = cluster.map_shared_rank(cta_o, sp)[idx];
  });
  cluster.sync();
}

// Merges the splits of one (seq, head): one thread per output element.
template <int kD>
__global__ void __launch_bounds__(kD)
    combine_splits_kernel(AttentionArgs args, const float* partial, int n_splits) {
  pdl_wait();
  pdl_launch_dependents();
  const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  if (d >= args.head_dim) return;
  if (args.split_by_q_len && args.cu_seqlens_q[seq + 1] - args.cu_seqlens_q[seq] != 1) return;
  const float* rows = partial + (int64_t{seq} * args.n_heads + head) * n_splits * (kD + 2);
  const int kv_len = args.seq_lens_kv[seq];
  const int keys = args.sliding_window > 0 ? min(kv_len, args.sliding_window) : kv_len;
  const int n_active = active_splits(keys, split_chunk(keys, n_splits));
  if (n_active == 1) return;  // the attention kernel wrote it
  const MergedState merged = merge_states<0>(
      n_active, sink_log2(args, head), [&](int sp) { return rows[sp * (kD + 2) + kD]; },
      [&](int sp) {
        const float* row = rows + sp * (kD + 2);
        return make_float2(row[kD + 1], row[d]);
      });
  const int token = args.cu_seqlens_q[seq];
  static_cast<bf16*>(args.out)[(int64_t{token} * args.n_heads + head) * args.head_dim + d] =
      merged.output();
}

// Batches that would split each context kClusterFromSplits ways or more (one or two sequences)
// split it kClusterSplits ways instead, in one cluster, and merge there: the combine kernel's
// serial pass over 17 to 66 splits per head was what cost. Fewer splits stay with the combine
// kernel, cheaper than a gang-scheduled cluster there (measured at batch 4 and 8), except a few
// splits in less than a wave (launch_head_dim). Clusters of 16 (a non-portable size) measured
// no better at batch 1. HADRON_ATTN_CLUSTER=0 in the environment turns clusters off (to
// measure what they bring, or to rule them out).
constexpr int kClusterFromSplits = 17;
bool clusters_enabled() {
  static const bool enabled = env_switch_on("HADRON_ATTN_CLUSTER");
  return enabled;
}

// The decode kernel's shared memory: its ring, and a push merge's inbox.
template <int kD, int kRing, int kW, bool kPush>
constexpr size_t kLaunchSharedBytes = kSharedBytes<kD, kRing, kW> + (kPush ? kInboxBytes<kD> : 0);

// The decode kernel, opted in to its shared memory on the current device (the attribute
// belongs to the device: set per launch, not once).
template <int kD, int kRing, bool kCluster, int kW, bool kPush = false, bool kPadded = false>
auto opted_in_kernel() {
  const auto kernel = attention_decode_kernel<kD, kRing, kCluster, kW, kPush, kPadded>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kLaunchSharedBytes<kD, kRing, kW, kPush>)));
  return kernel;
}

// The decode kernel over n_splits splits with a kRing-deep ring (clustered: the splits of a
// context form one cluster).
template <int kD, int kRing, bool kCluster, int kW = kWarps, bool kPush = false,
          bool kPadded = false>
void launch_decode(const AttentionArgs& args, float* workspace, int n_splits, cudaStream_t stream) {
  const auto kernel = opted_in_kernel<kD, kRing, kCluster, kW, kPush, kPadded>();
  launch_pdl_clustered(kernel, dim3(n_splits, args.n_kv_heads, args.n_seqs), dim3(kW * 32),
                       kLaunchSharedBytes<kD, kRing, kW, kPush>, stream, kCluster ? n_splits : 1,
                       args, args.scale * kLog2e, workspace);
}

// How many one-split CTAs of kW warps at head_dim 128 the device holds at once.
template <int kW>
int64_t one_split_wave() {
  constexpr int kRing = kOneSplitStages<128>;
  static const int64_t ctas = resident_warps(opted_in_kernel<128, kRing, false, kW>(), kW * 32,
                                             kSharedBytes<128, kRing, kW>) /
                              kW;
  return ctas;
}

// A one-split launch at head_dim 128 of `ctas` CTAs (one per (KV head, sequence)) in CTAs of 4, 3
// or 2 warps. A CTA's keys are shared by its warps, so its time goes as 1 / width, and the
// launch's as waves of resident CTAs x that: the width with the least waves / width, the fewer
// waves on a tie. On an H100 the three hold 3, 4 and 6 CTAs an SM (12 warps each way: registers
// and the 2-deep rings), so Qwen3-8B's 1,024 CTAs at 128 sequences take 2 waves of 3-warp CTAs
// instead of 2.6 of 4-warp ones, 512 one wave of 3-warp CTAs, and 768 one wave of 2-warp CTAs
// (each measured against the others: docs/performance-notes.md, "Decode attention").
void launch_one_split_128(const AttentionArgs& args, float* workspace, int64_t ctas,
                          cudaStream_t stream) {
  constexpr int kRing = kOneSplitStages<128>;
  // waves / width in twelfths (one_split_wave counts at least one CTA an SM).
  const auto waves = [&](int64_t wave) { return ceil_div(ctas, wave); };
  const int64_t cost4 = 3 * waves(one_split_wave<4>()), cost3 = 4 * waves(one_split_wave<3>()),
                cost2 = 6 * waves(one_split_wave<2>());
  if (cost2 <= cost3 && cost2 <= cost4)
    return launch_decode<128, kRing, false, 2>(args, workspace, 1, stream);
  if (cost3 <= cost4) return launch_decode<128, kRing, false, 3>(args, workspace, 1, stream);
  launch_decode<128, kRing, false, 4>(args, workspace, 1, stream);
}

template <int kD, bool kPadded>
void launch_head_dim(const AttentionArgs& args, float* workspace, int n_sms, cudaStream_t stream) {
  const int group = args.n_heads / args.n_kv_heads;
  if (group > kMaxGroup)
    fail_dispatch("decode attention GQA group (heads per KV head), at most", group, {8});
  int n_splits = plan_n_splits(args, n_sms);
  const int64_t ctas = int64_t{args.n_seqs} * args.n_kv_heads;
  // A few splits (2..kClusterSplits) also merge in a cluster, of their own count, where the
  // launch is less than the wave plan_n_splits aims at: only a sliding window's cap plans that
  // (gpt-oss-20b's 128 keys: 2 splits, up to 16 sequences); clusters of 2-3 in more than a
  // wave (Qwen3-8B at 16 / 32 sequences) cost 3%.
  const bool few_under_a_wave =
      n_splits >= 2 && n_splits <= kClusterSplits && n_splits * ctas < int64_t{kCtasPerSm} * n_sms;
  const bool cluster =
      !kPadded && (n_splits >= kClusterFromSplits || few_under_a_wave) && clusters_enabled();
  if constexpr (!kPadded) {
    if (cluster) {
      n_splits = std::min(n_splits, kClusterSplits);  // many splits become one cluster's worth
      if (group * kD <= kPushElements)
        return launch_decode<kD, kStages<kD>, true, kWarps, true>(args, workspace, n_splits,
                                                                  stream);
      return launch_decode<kD, kStages<kD>, true>(args, workspace, n_splits, stream);
    }
    if (n_splits == 1 && kD == 128) return launch_one_split_128(args, workspace, ctas, stream);
  }
  if (n_splits == 1)
    launch_decode<kD, kOneSplitStages<kD>, false, kWarps, false, kPadded>(args, workspace, 1,
                                                                          stream);
  else
    launch_decode<kD, kStages<kD>, false, kWarps, false, kPadded>(args, workspace, n_splits,
                                                                  stream);
  if (n_splits > 1)  // a cluster has merged its splits itself (returned above)
    launch_pdl(combine_splits_kernel<kD>, dim3(args.n_heads, args.n_seqs), dim3(kD), 0, stream,
               args, workspace, n_splits);
}

}  // namespace

size_t decode_workspace_floats(const AttentionArgs& args, int n_sms) {
  const int n_splits = plan_n_splits(args, n_sms);
  if (n_splits == 1) return 0;
  return size_t(args.n_seqs) * args.n_heads * n_splits * (attention_tile_dim(args.head_dim) + 2);
}

// Splits happen only when n_seqs * n_kv_heads < kCtasPerSm n_sms, and then n_seqs * n_splits <
// kCtasPerSm n_sms / n_kv_heads + n_seqs < 2 kCtasPerSm n_sms / n_kv_heads; times n_heads *
// (head_dim + 2), n_heads <= 8 n_kv_heads.
size_t decode_workspace_max_floats(int n_sms) {
  return size_t{2} * kCtasPerSm * n_sms * kMaxGroup * (256 + 2);
}

void launch_attention_decode(const AttentionArgs& args, float* workspace, int n_sms,
                             cudaStream_t stream) {
  if (args.n_seqs == 0) return;
  const int tile_dim = attention_tile_dim(args.head_dim);
  const bool padded = tile_dim != args.head_dim;
  switch (tile_dim) {
    case 64:
      return padded ? launch_head_dim<64, true>(args, workspace, n_sms, stream)
                    : launch_head_dim<64, false>(args, workspace, n_sms, stream);
    case 128:
      return padded ? launch_head_dim<128, true>(args, workspace, n_sms, stream)
                    : launch_head_dim<128, false>(args, workspace, n_sms, stream);
    default:
      return padded ? launch_head_dim<256, true>(args, workspace, n_sms, stream)
                    : launch_head_dim<256, false>(args, workspace, n_sms, stream);
  }
}

}  // namespace hadron::cuda
