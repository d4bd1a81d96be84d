// Decode-batch GEMM on Hopper tensor cores: out[m, n] = x[m, k] @ w[n, k]^T (+ bias[n]) for
// 3-64 rows, where the weights (n x k) are the bytes that matter and the step is bound by
// streaming them once. Each CTA owns 128 weight rows (two consumer warpgroups of 64, wgmma m64
// with the tokens as wgmma's N: the product is computed transposed, out^T = w x^T) and a slice
// of k; one producer thread feeds a ring of stages with TMA (128-byte-swizzled 64-wide k blocks
// of w and of x; rows past m or n and columns past k arrive as zeros). When the weight tiles
// alone would leave SMs idle, k is split over the CTAs of a thread-block cluster, which sum
// their partial tiles through distributed shared memory: no workspace, no second kernel. The
// weight tiles of the first stages are requested before the programmatic dependent-launch wait
// (launch.cuh), x's after it.
// The qkv variant (head_dim 128: one head a weight tile) hands each token's head to
// qkv_rope_store's per-head arithmetic (qkv_rope.cuh) in the epilogue: q to q_out, k and v into
// the paged cache, no qkv tensor.
// The SiLU-and-mul variant takes a fused [gate | up] weight: a tile is 64 gate rows and the
// matching 64 up rows (two TMA boxes a stage), and the epilogue writes silu(gate) * up, the
// arithmetic of silu_mul.cu on the bf16-rounded sums: no gate_up tensor, no silu_mul kernel.
// Why not more rows: every CTA reads its k slice of x from L2 as well, as many bytes as its
// weights at 128 rows, where cuBLASLt is faster; a deeper ring (the whole 227 KB) streams no
// faster, and pairs of tiles sharing x by multicast ran 2-2.5x slower
// (docs/performance-notes.md, "Decode GEMM").
#include <cooperative_groups.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/qkv_rope.cuh"
#include "backends/cuda/silu_mul.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kBlockN = 128;   // weight rows a CTA
constexpr int kBlockK = 64;    // one 128-byte swizzled row of bf16
constexpr int kThreads = 384;  // warpgroup 0: the producer; 1 and 2: the consumers
constexpr int kConsumerWarps = 8;
constexpr int kStageBudget = 196608;  // shared bytes for the ring (of 227 KB; more: no faster)
constexpr int kMaxSplits = 8;         // CTAs of a cluster (the portable limit)

template <int kTokens>
struct Layout {
  static constexpr int kWBytes = kBlockN * kBlockK * 2;  // 16 KB
  static constexpr int kXBytes = kTokens * kBlockK * 2;
  static constexpr int kStageBytes = kWBytes + kXBytes;  // 1024-aligned
  static constexpr int kStages = std::min(8, kStageBudget / kStageBytes);
  static constexpr int kBarrierOffset = kStages * kStageBytes;
  // 1024 bytes of slack to align the ring (128-byte swizzle atoms are 1024-byte aligned).
  static constexpr int kSharedBytes = kBarrierOffset + 2 * kStages * 8 + 1024;
};

// wgmma shared-memory descriptor of a K-major tile of 128-byte rows in the 128-byte swizzle
// TMA writes: start address, stride between 8-row groups 1024 bytes, swizzle mode 1 (128 B).
// The leading-byte offset is unused for swizzled K-major layouts. A k step of 16 elements
// within the row is +32 bytes on the start address (the hardware applies the swizzle).
__device__ __forceinline__ uint64_t sw128_descriptor(uint32_t address) {
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | (uint64_t{1} << 16) |
         (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving accesses of the accumulators across the asynchronous MMAs.
template <int kRegs>
__device__ __forceinline__ void fence_accumulators(float (&d)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D[64 x kTokens] += A[64 x 16] B[16 x kTokens], A and B K-major in shared memory (their
// descriptors), fp32 accumulators in registers: thread t of the warpgroup holds rows
// 16 (t / 32) + (t % 32) / 4 (+ 8) and columns 8 j + 2 (t % 4) (+ 1) in d[4 j + ...].
template <int kTokens>
__device__ __forceinline__ void wgmma_bf16(float (&d)[kTokens / 2], uint64_t desc_a,
                                           uint64_t desc_b);

template <>
__device__ __forceinline__ void wgmma_bf16<16>(float (&d)[8], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7"
      "}, %8, %9, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_bf16<32>(float (&d)[16], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, "
      "%8, %9, %10, %11, %12, %13, %14, %15"
      "}, %16, %17, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_bf16<64>(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, "
      "%8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// Four values rounded to bf16 into dst (8-byte aligned): every epilogue's store.
__device__ __forceinline__ void store4_bf16(bf16* dst, const float (&v)[4]) {
  *reinterpret_cast<uint2*>(dst) = make_uint2(pack_bf16(v[0], v[1]), pack_bf16(v[2], v[3]));
}

// Rows [c1, c1 + box rows) and columns [c0, c0 + 64) of a 2-D bf16 tensor into shared memory
// (128-byte swizzle), counted on barrier.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1,
                                            uint64_t* barrier, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(barrier)), "l"(policy)
      : "memory");
}

// Padded rows of the fp32 tile the epilogue sums (conflict-free stores from the accumulator
// layout: 4 column pairs of one row land 8 banks apart).
constexpr int kTileStride = kBlockN + 4;

// What a launch computes: the product in bf16 or f32, the qkv product handed to
// qkv_rope_store's arithmetic (q to q_out, k and v into the cache), or silu(gate) * up of a
// [gate | up] product.
enum class Kind { kBf16, kF32, kQkvRope, kSiluMul };
// Weight rows a TMA box: kSiluMul loads a tile's gate and up halves apart.
template <Kind kKind>
constexpr int kBoxRows = kKind == Kind::kSiluMul ? kBlockN / 2 : kBlockN;

struct DecodeGemmParams {
  const void* bias;  // [n] in out's dtype, or null
  void* out;         // [m, n]; kSiluMul: [m, n / 2]
  int m, n, k;       // kSiluMul: n = 2 inter (the weight's rows)
  int k_blocks;      // 64-wide k blocks in all; CTA `split` takes
                     // [split k_blocks / splits, (split + 1) k_blocks / splits)
  int splits;
  QkvRopeStoreArgs rope;  // kQkvRope (its qkv unused): one head of 128 a weight tile
};

// Grid: (tiles of kBlockN weight rows) x splits, in clusters of `splits` (consecutive blocks,
// one tile).
template <int kTokens, Kind kKind>
__global__ void __launch_bounds__(kThreads, 1)
    decode_gemm_kernel(const __grid_constant__ CUtensorMap w_map,
                       const __grid_constant__ CUtensorMap x_map, DecodeGemmParams p) {
  constexpr bool kOutF32 = kKind == Kind::kF32;
  using L = Layout<kTokens>;
  const void* bias = p.bias;
  void* out = p.out;
  const int m = p.m, n = p.n, k_blocks = p.k_blocks, splits = p.splits;
  // The fp32 tile, and the qkv epilogue's staging of a head a warp, over the ring.
  static_assert((kTokens * kTileStride + kThreads / 32 * kBlockN) * 4 <=
                L::kStages * L::kStageBytes);
  extern __shared__ uint8_t shared_raw[];
  uint8_t* ring = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(shared_raw) + 1023) &
                                             ~static_cast<uintptr_t>(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + L::kBarrierOffset);
  uint64_t* empty = full + L::kStages;
  const int split = static_cast<int>(blockIdx.x) % splits;
  const int tile = static_cast<int>(blockIdx.x) / splits;
  const int n0 = tile * kBlockN;
  const int kb_begin = split * k_blocks / splits;
  const int n_iters = (split + 1) * k_blocks / splits - kb_begin;
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < L::kStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], kConsumerWarps);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  float acc[kTokens / 2];
#pragma unroll
  for (int i = 0; i < kTokens / 2; ++i) acc[i] = 0.0f;
  if (threadIdx.x == 0) {  // the producer
    uint64_t evict_first, evict_last;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(evict_first));
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(evict_last));
    // The tile's weight rows of k block kb: kSiluMul's gate rows, then the matching up rows.
    const auto load_w = [&](uint8_t* stage, int kb, uint64_t* barrier) {
      if constexpr (kKind == Kind::kSiluMul) {
        constexpr int kHalf = kBlockN / 2;
        tma_load_2d(stage, &w_map, kb * kBlockK, tile * kHalf, barrier, evict_first);
        tma_load_2d(stage + kHalf * 128, &w_map, kb * kBlockK, n / 2 + tile * kHalf, barrier,
                    evict_first);
      } else {
        tma_load_2d(stage, &w_map, kb * kBlockK, n0, barrier, evict_first);
      }
    };
    const int prologue = n_iters < L::kStages ? n_iters : L::kStages;
    for (int i = 0; i < prologue; ++i) {  // weights: no kernel of the step writes them
      mbarrier_expect_bytes(&full[i], L::kStageBytes);
      load_w(ring + i * L::kStageBytes, kb_begin + i, &full[i]);
    }
    pdl_wait();
    pdl_launch_dependents();
    for (int i = 0; i < prologue; ++i) {
      tma_load_2d(ring + i * L::kStageBytes + L::kWBytes, &x_map, (kb_begin + i) * kBlockK, 0,
                  &full[i], evict_last);
    }
    for (int i = L::kStages; i < n_iters; ++i) {
      const int s = i % L::kStages;
      mbarrier_wait(&empty[s], ((i / L::kStages) & 1) ^ 1);
      mbarrier_expect_bytes(&full[s], L::kStageBytes);
      uint8_t* stage = ring + s * L::kStageBytes;
      load_w(stage, kb_begin + i, &full[s]);
      tma_load_2d(stage + L::kWBytes, &x_map, (kb_begin + i) * kBlockK, 0, &full[s], evict_last);
    }
  } else {
    pdl_wait();
    pdl_launch_dependents();
  }
  if (warpgroup > 0) {  // the consumers: weight rows 64 (warpgroup - 1) of the tile
    for (int i = 0; i < n_iters; ++i) {
      const int s = i % L::kStages;
      mbarrier_wait(&full[s], (i / L::kStages) & 1);
      const uint32_t w_tile = smem_addr(ring + s * L::kStageBytes) + (warpgroup - 1) * 64 * 128;
      const uint32_t x_tile = smem_addr(ring + s * L::kStageBytes + L::kWBytes);
      fence_accumulators(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk)
        wgmma_bf16<kTokens>(acc, sw128_descriptor(w_tile + kk * 32),
                            sw128_descriptor(x_tile + kk * 32));
      wgmma_commit();
      fence_accumulators(acc);
      if (i > 0) {  // the previous stage's products are done: hand it back
        wgmma_wait<1>();
        fence_accumulators(acc);
        if (threadIdx.x % 32 == 0) mbarrier_arrive(&empty[(i - 1) % L::kStages]);
      }
    }
    wgmma_wait<0>();
    fence_accumulators(acc);
  }
  __syncthreads();  // every product has read its stage: the ring becomes the fp32 tile

  float* tile_sums = reinterpret_cast<float*>(ring);  // [kTokens][kTileStride]
  if (warpgroup > 0) {
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
    const int row = (warpgroup - 1) * 64 + 16 * warp + lane / 4;
#pragma unroll
    for (int j = 0; j < kTokens / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int c = 0; c < 2; ++c)
          tile_sums[(8 * j + 2 * (lane % 4) + c) * kTileStride + row + 8 * half] =
              acc[4 * j + 2 * half + c];
  }
  cg::cluster_group cluster = cg::this_cluster();
  if (splits > 1)
    cluster.sync();
  else
    __syncthreads();
  // The cluster's sum of weight rows n0 + 4 quad .. + 3 for one token, bias added in fp32 (as
  // cuBLASLt adds it, before the one rounding to bf16).
  const auto quad_sum = [&](int token, int quad, float(&values)[4]) {
    const int offset = token * kTileStride + 4 * quad;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int r = 0; r < splits; ++r) {
      const float* part = splits > 1 ? cluster.map_shared_rank(tile_sums, r) : tile_sums;
      const float4 v = *reinterpret_cast<const float4*>(part + offset);
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    values[0] = sum.x, values[1] = sum.y, values[2] = sum.z, values[3] = sum.w;
    if (bias == nullptr) return;
    const int feature = n0 + 4 * quad;
    for (int e = 0; e < 4; ++e)
      values[e] += kOutF32 ? static_cast<const float*>(bias)[feature + e]
                           : __bfloat162float(static_cast<const bf16*>(bias)[feature + e]);
  };
  const int rows = m < kTokens ? m : kTokens;
  if constexpr (kKind == Kind::kQkvRope) {
    // The tile is one head; each warp takes whole tokens of the cluster's interleaved share,
    // lane l the head's elements 4 l .. 4 l + 3, as qkv_rope_store's warps hold them.
    const QkvRopeStoreArgs& a = p.rope;
    const int head = n0 / kBlockN, warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const QkvHead h = qkv_head(a, head);
    float norm_weight[4];
    if (h.norm != nullptr)
      for (int e = 0; e < 4; ++e) norm_weight[e] = __bfloat162float(h.norm[4 * lane + e]);
    float* staged = tile_sums + kTokens * kTileStride + warp * kBlockN;
    for (int token = split + splits * warp; token < rows; token += splits * (kThreads / 32)) {
      const int32_t slot = a.slot_mapping[token];
      if (!h.is_q && slot < 0) continue;  // padding token: no cache write
      float x[4];
      quad_sum(token, lane, x);
      for (int e = 0; e < 4; ++e) x[e] = __bfloat162float(__float2bfloat16(x[e]));  // qkv's bf16
      bf16* dst = qkv_head_dst(a, h, head, token, slot);
      float result[4] = {x[0], x[1], x[2], x[3]};
      if (h.is_q || h.is_k)
        norm_rope_head<4>(
            x, h.norm != nullptr, norm_weight, a.eps,
            head_rotation<4>(a.cos_sin, a.positions[token], a.rotary_dim, a.neox, lane),
            a.rotary_dim, a.head_dim, staged, lane, result);
      store4_bf16(dst + 4 * lane, result);
    }
  } else if constexpr (kKind == Kind::kSiluMul) {
    // Each CTA of the cluster takes an interleaved share of the tile's (token, 4 intermediates)
    // quads: gate's sums from rows 4 quad.., up's from 64 + 4 quad.., each rounded to bf16 as the
    // gate_up tensor would hold it (no bias: the op has none).
    constexpr int kQuads = kBlockN / 8;
    const int inter = n / 2;
    for (int q = split * kThreads + static_cast<int>(threadIdx.x); q < rows * kQuads;
         q += splits * kThreads) {
      const int token = q / kQuads, feature = tile * (kBlockN / 2) + 4 * (q % kQuads);
      if (feature >= inter) continue;  // inter % 4 == 0: a quad is all in or all out
      float gate[4], up[4];
      quad_sum(token, q % kQuads, gate);
      quad_sum(token, kQuads + q % kQuads, up);
      float result[4];
      for (int e = 0; e < 4; ++e)
        result[e] = silu_mul1(__bfloat162float(__float2bfloat16(gate[e])),
                              __bfloat162float(__float2bfloat16(up[e])));
      store4_bf16(static_cast<bf16*>(out) + static_cast<int64_t>(token) * inter + feature, result);
    }
  } else {
    // Each CTA of the cluster sums and stores an interleaved share of the tile's
    // (token, 4 weight rows) quads.
    constexpr int kQuads = kBlockN / 4;
    for (int q = split * kThreads + static_cast<int>(threadIdx.x); q < rows * kQuads;
         q += splits * kThreads) {
      const int token = q / kQuads, feature = n0 + 4 * (q % kQuads);
      if (feature >= n) continue;  // n % 8 == 0: a quad is all in or all out
      float values[4];
      quad_sum(token, q % kQuads, values);
      const int64_t at = static_cast<int64_t>(token) * n + feature;
      if constexpr (kOutF32) {
        *reinterpret_cast<float4*>(static_cast<float*>(out) + at) =
            make_float4(values[0], values[1], values[2], values[3]);
      } else {
        store4_bf16(static_cast<bf16*>(out) + at, values);
      }
    }
  }
  if (splits > 1) cluster.sync();  // the other CTAs' tiles are read until here
}

// The driver's tensor-map encoder, through the runtime (no link against libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      fail_cuda(cudaErrorSymbolNotFound, "cuTensorMapEncodeTiled", __FILE__, __LINE__);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A [rows, cols] bf16 tensor of rows `row_stride` elements apart, read in boxes of box_rows x
// 64 columns, 128-byte swizzled; reads past either edge give zeros.
CUtensorMap tensor_map(const void* base, int64_t rows, int64_t cols, int64_t row_stride,
                       int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * 2};
  const cuuint32_t box[2] = {kBlockK, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    fail_cuda(cudaErrorInvalidValue, "cuTensorMapEncodeTiled", __FILE__, __LINE__);
  return map;
}

// How many CTAs of `kernel` can be resident at once in clusters of 1 to kMaxSplits (a GPC
// holds whole clusters: on an H100 132 CTAs alone or in pairs, 120 in clusters of 4 or 8).
template <typename Kernel>
std::array<int, kMaxSplits> resident_ctas(Kernel kernel, int shared_bytes) {
  std::array<int, kMaxSplits> ctas{};
  for (int size = 1; size <= kMaxSplits; ++size) {
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(size);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(size) * 64);
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = static_cast<size_t>(shared_bytes);
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    ctas[size - 1] = clusters * size;
  }
  return ctas;
}

// The split of k (cluster size) for `tiles` weight tiles: the largest whose CTAs are all resident
// at once. The rate at which an SM streams its weights is bounded (on an H100 about 2.1 TB/s
// from 64 SMs, 2.4 from 96, 2.8 from 132), so more streaming SMs pay until a CTA would wait for a
// second round and stream alone at the end. When the tiles alone exceed one round, 1: later
// rounds start as earlier CTAs finish.
int choose_splits(const std::array<int, kMaxSplits>& resident, int tiles, int k_blocks) {
  int best = 1;
  for (int splits = 2; splits <= kMaxSplits && splits <= k_blocks; ++splits)
    if (tiles * splits <= resident[splits - 1]) best = splits;
  return best;
}

template <int kTokens, Kind kKind>
void launch_with(const void* x, const void* w, DecodeGemmParams p, int splits,
                 cudaStream_t stream) {
  const auto kernel = decode_gemm_kernel<kTokens, kKind>;
  constexpr int kShared = Layout<kTokens>::kSharedBytes;
  // Per launch, as every kernel file does (a second device needs it too); the residency is the
  // first device's (the devices of one process are alike).
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  static const std::array<int, kMaxSplits> resident = [&] {
    const std::array<int, kMaxSplits> ctas = resident_ctas(kernel, kShared);
    if (env_flag_set("HADRON_LOG_GEMV_CHOICE")) {
      std::fprintf(stderr,
                   "decode_gemm<%d, %d>: %d stages; resident CTAs in clusters of 1-%d:", kTokens,
                   static_cast<int>(kKind), Layout<kTokens>::kStages, kMaxSplits);
      for (const int n : ctas) std::fprintf(stderr, " %d", n);
      std::fprintf(stderr, "\n");
    }
    return ctas;
  }();
  const int tiles = static_cast<int>(kKind == Kind::kSiluMul ? ceil_div(p.n / 2, kBlockN / 2)
                                                             : ceil_div(p.n, kBlockN));
  p.k_blocks = static_cast<int>(ceil_div(p.k, kBlockK));
  p.splits = splits > 0 ? splits : choose_splits(resident, tiles, p.k_blocks);
  launch_pdl_clustered(kernel, dim3(tiles * p.splits), dim3(kThreads), kShared, stream,
                       static_cast<unsigned>(p.splits),
                       tensor_map(w, p.n, p.k, p.k, kBoxRows<kKind>),
                       tensor_map(x, p.m, p.k, p.k, kTokens), p);
  CUDA_CHECK_LAUNCH();
}

// Dispatches m to the token tile (16, 32 or 64 rows).
template <Kind kKind>
void launch_rows(const void* x, const void* w, const DecodeGemmParams& p, int splits,
                 cudaStream_t stream) {
  if (p.m <= 16) return launch_with<16, kKind>(x, w, p, splits, stream);
  if (p.m <= 32) return launch_with<32, kKind>(x, w, p, splits, stream);
  if (p.m <= 64) return launch_with<64, kKind>(x, w, p, splits, stream);
  fail_dispatch("decode_gemm rows", p.m, {16, 32, 64});
}

// The parameters of an m x n x k product into out.
DecodeGemmParams params(const void* bias, void* out, int64_t m, int64_t n, int64_t k) {
  DecodeGemmParams p{};
  p.bias = bias;
  p.out = out;
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  return p;
}

}  // namespace

void launch_decode_gemm(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                        int64_t m, int64_t n, int64_t k, int splits, cudaStream_t stream) {
  if (m == 0) return;
  const DecodeGemmParams p = params(bias, out, m, n, k);
  if (out_f32)
    launch_rows<Kind::kF32>(x, w, p, splits, stream);
  else
    launch_rows<Kind::kBf16>(x, w, p, splits, stream);
}

void launch_decode_gemm_qkv_rope(const void* x, const void* w, const void* bias,
                                 const QkvRopeStoreArgs& rope, int64_t k, int splits,
                                 cudaStream_t stream) {
  if (rope.n_tokens == 0) return;
  if (rope.head_dim != kBlockN)
    fail_dispatch("decode_gemm_qkv_rope head_dim", static_cast<int>(rope.head_dim), {kBlockN});
  const int64_t n = (rope.n_heads + 2 * rope.n_kv_heads) * rope.head_dim;
  DecodeGemmParams p = params(bias, nullptr, rope.n_tokens, n, k);
  p.rope = rope;
  launch_rows<Kind::kQkvRope>(x, w, p, splits, stream);
}

void launch_decode_gemm_silu(const void* x, const void* w, void* activated, int64_t m,
                             int64_t inter, int64_t k, int splits, cudaStream_t stream) {
  if (m == 0) return;
  launch_rows<Kind::kSiluMul>(x, w, params(nullptr, activated, m, 2 * inter, k), splits, stream);
}

}  // namespace hadron::cuda
