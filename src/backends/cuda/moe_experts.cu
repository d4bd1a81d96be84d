// MoE expert computation over bf16 or MXFP4 weights (MXFP4 decoded in registers here and in
// the decode kernels, into shared memory in the grouped GEMMs).
// Small batches (decode): gate_up + activation for every routed (token, slot) pair in one
// kernel, whose blocks each own some rows of one expert and apply them to all of that
// expert's tokens; then down + weighted combine in one kernel, whose blocks each own some
// output columns of every token (bf16 weights go to moe_decode.cu's kernels first, which
// stream faster, and MXFP4 weights to moe_mxfp4_decode.cu's tensor-core kernels; these serve
// rows too wide for their shared memory). Larger batches: sort the pairs by expert on the
// device, one grouped tensor-core pass per projection (moe_grouped_gemm.cu), then a per-token
// combine. Outputs are summed in slot order (deterministic: no atomics on outputs); no host
// synchronisation, so usable in CUDA graphs.
// Kernels follow launch.cuh's contract: pdl_wait() first, as the inputs are activations.
#include <cuda_fp16.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/moe_grouped_gemm.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/moe_weights.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kAlignThreads = 1024;
constexpr int kWarps = 8;         // warps per block in the expert products
constexpr int kTokens = 4;        // tokens sharing each weight load
constexpr int kDownRows = 8;      // output columns per block of the small-batch down kernel
constexpr int kDownWarpRows = 4;  // of which one warp computes for one pair
constexpr int kMaxPairs = kMoeSmallMaxTokens * 32;  // top-k <= 32
static_assert(kMoeSmallMaxTokens <= kTokens);

// One weight row as 16-byte chunks: 8 bf16, or 32 MXFP4 values with one scale byte each.
struct WeightRow {
  const uint4* chunks;
  const uint8_t* scales;  // MXFP4 only
};

template <bool kMxfp4>
constexpr int kChunkValues = kMxfp4 ? 32 : 8;

// Row `row` of a stacked [rows, k] weight matrix.
template <bool kMxfp4>
__device__ __forceinline__ WeightRow weight_row(const void* base, const uint8_t* scales,
                                                int64_t row, int64_t k) {
  if constexpr (kMxfp4)
    return {reinterpret_cast<const uint4*>(static_cast<const uint8_t*>(base) + row * (k / 2)),
            scales + row * (k / 32)};
  else
    return {reinterpret_cast<const uint4*>(static_cast<const bf16*>(base) + row * k), nullptr};
}

// Activations of this step (written by an earlier kernel): 16 bytes through the read-only path.
__device__ __forceinline__ uint4 load_x(const bf16* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

// acc[m][r] += dot(rows[r], x[m]) over k values (a multiple of the chunk) for n_m <= kMaxM
// tokens: lane-strided chunks, kUnroll * kRows 16-byte weight loads in flight per lane, then
// warp-summed (every lane holds the sums).
template <bool kMxfp4, int kRows, int kMaxM>
__device__ __forceinline__ void dot_rows(const WeightRow (&rows)[kRows],
                                         const bf16* const (&x)[kMaxM], int n_m, int64_t k,
                                         int lane, float (&acc)[kMaxM][kRows]) {
  constexpr int kValues = kChunkValues<kMxfp4>;
  constexpr int kUnroll = kRows >= 8 ? 1 : 8 / kRows;
  const int64_t n_chunks = k / kValues;
  for (int64_t base = lane; base < n_chunks; base += 32 * kUnroll) {
    uint4 wv[kUnroll][kRows];
    float scale[kUnroll][kRows];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (base + u * 32 < n_chunks) {
          wv[u][r] = load_weights(rows[r].chunks + base + u * 32);
          if constexpr (kMxfp4) scale[u][r] = mxfp4_scale(rows[r].scales[base + u * 32]);
        }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = base + u * 32;
      if (c >= n_chunks) break;
      float part[kMaxM][kRows] = {};
#pragma unroll
      for (int v = 0; v < kValues / 8; ++v) {
        float w[kRows][8];
#pragma unroll
        for (int r = 0; r < kRows; ++r) decode8<kMxfp4>(wv[u][r], v, w[r]);
#pragma unroll
        for (int m = 0; m < kMaxM; ++m) {
          if (m >= n_m) break;
          float xf[8];
          const uint4 xv = load_x(x[m] + c * kValues + v * 8);
          to_f32(reinterpret_cast<const Bf16x8&>(xv), xf);
#pragma unroll
          for (int r = 0; r < kRows; ++r)
#pragma unroll
            for (int i = 0; i < 8; ++i) part[m][r] += w[r][i] * xf[i];
        }
      }
#pragma unroll
      for (int m = 0; m < kMaxM; ++m)
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if constexpr (kMxfp4)
            acc[m][r] += part[m][r] * scale[u][r];
          else
            acc[m][r] += part[m][r];
        }
    }
  }
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[m][r] = warp_sum(acc[m][r]);
}

__device__ __forceinline__ bool valid_expert(const MoeExpertsArgs& a, int e) {
  return e >= 0 && e < a.n_experts;
}

// Intermediate row i of expert e: its gate and up weight rows and biases.
struct GateUpRows {
  WeightRow rows[2];
  float gate_bias, up_bias;
};

template <bool kMxfp4>
__device__ __forceinline__ GateUpRows gate_up_rows(const MoeExpertsArgs& a, int e, int64_t i) {
  const int64_t gate_idx = moe_gate_up_row(a, e, i, false);
  const int64_t up_idx = moe_gate_up_row(a, e, i, true);
  return {{weight_row<kMxfp4>(a.gate_up, a.gate_up_scales, gate_idx, a.hidden),
           weight_row<kMxfp4>(a.gate_up, a.gate_up_scales, up_idx, a.hidden)},
          moe_bias(a.gate_up_bias, gate_idx),
          moe_bias(a.gate_up_bias, up_idx)};
}

// activated[rows[m], i] = act(gate . x[m] + b, up . x[m] + b) for n_m <= kTokens tokens.
template <bool kMxfp4>
__device__ __forceinline__ void gate_up_tokens(const MoeExpertsArgs& a, const GateUpRows& g,
                                               const bf16* const (&x)[kTokens],
                                               const int (&rows)[kTokens], int n_m, int64_t i,
                                               int lane, bf16* activated) {
  float acc[kTokens][2] = {};
  dot_rows<kMxfp4, 2, kTokens>(g.rows, x, n_m, a.hidden, lane, acc);
  if (lane < n_m)  // lane m writes token m (registers indexed by a constant)
#pragma unroll
    for (int m = 0; m < kTokens; ++m)
      if (m == lane)
        activated[rows[m] * a.inter + i] =
            __float2bfloat16(moe_activate(a, acc[m][0] + g.gate_bias, acc[m][1] + g.up_bias));
}

// ---- Small batches: pairs in routing order, activated [n_pairs, inter] ----

// Block (x, p): intermediate rows x * kWarps.. of pair p's expert, for every pair routed to
// that expert; only the expert's first pair's blocks run (the others exit at once).
template <bool kMxfp4>
__global__ void __launch_bounds__(kWarps * 32, 2)
    moe_small_gate_up_kernel(MoeExpertsArgs a, bf16* activated) {
  pdl_wait();
  pdl_launch_dependents();
  const int n_pairs = static_cast<int>(a.n_tokens) * a.top_k, p = blockIdx.y;
  const int e = a.topk_ids[p];
  if (!valid_expert(a, e)) return;
  for (int q = 0; q < p; ++q)
    if (a.topk_ids[q] == e) return;
  const int lane = threadIdx.x % 32;
  const int64_t i = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32;
  if (i >= a.inter) return;
  const GateUpRows g = gate_up_rows<kMxfp4>(a, e, i);
  // The pairs routed to e from p on, kTokens at a time (a token's experts are distinct, so
  // up to kMoeSmallMaxTokens tokens take one round); arrays indexed by constants only.
  for (int q = p; q < n_pairs;) {
    const bf16* x[kTokens];
    int rows[kTokens];
    int n_m = 0;
#pragma unroll
    for (int m = 0; m < kTokens; ++m) {
      while (q < n_pairs && a.topk_ids[q] != e) ++q;
      rows[m] = q < n_pairs ? q : (m == 0 ? 0 : rows[0]);
      x[m] = static_cast<const bf16*>(a.x) + int64_t{rows[m] / a.top_k} * a.hidden;
      if (q < n_pairs) ++n_m, ++q;
    }
    if (n_m == 0) break;
    gate_up_tokens<kMxfp4>(a, g, x, rows, n_m, i, lane, activated);
  }
}

// Block b: output columns h0 = b * kDownRows.. of every token. The warps share out
// (pair, kDownWarpRows columns) items, computing down_h . activated[p] + b; then each
// thread sums one (token, column) over the token's slots in order.
template <bool kMxfp4>
__global__ void __launch_bounds__(kWarps * 32)
    moe_small_down_kernel(MoeExpertsArgs a, const bf16* activated) {
  __shared__ float results[kMaxPairs][kDownRows];
  pdl_wait();
  pdl_launch_dependents();
  const int n_pairs = static_cast<int>(a.n_tokens) * a.top_k;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t h0 = blockIdx.x * int64_t{kDownRows};
  constexpr int kGroups = kDownRows / kDownWarpRows;
  for (int item = warp; item < n_pairs * kGroups; item += kWarps) {
    const int p = item / kGroups, e = a.topk_ids[p];
    const int64_t first = h0 + item % kGroups * kDownWarpRows;
    if (!valid_expert(a, e)) continue;  // skipped by the sum below too
    WeightRow rows[kDownWarpRows];
#pragma unroll
    for (int r = 0; r < kDownWarpRows; ++r)
      rows[r] = weight_row<kMxfp4>(a.down, a.down_scales,
                                   e * a.hidden + min(first + r, a.hidden - 1), a.inter);
    const bf16* const x[1] = {activated + int64_t{p} * a.inter};
    float acc[1][kDownWarpRows] = {};
    dot_rows<kMxfp4, kDownWarpRows, 1>(rows, x, 1, a.inter, lane, acc);
#pragma unroll
    for (int r = 0; r < kDownWarpRows; ++r)
      if (r == lane && first + r < a.hidden)
        results[p][first - h0 + r] = acc[0][r] + moe_bias(a.down_bias, e * a.hidden + first + r);
  }
  __syncthreads();
  auto* out = static_cast<bf16*>(a.out);
  for (int idx = threadIdx.x; idx < a.n_tokens * kDownRows; idx += blockDim.x) {
    const int t = idx / kDownRows, r = idx % kDownRows;
    const int64_t h = h0 + r;
    if (h >= a.hidden) continue;
    float sum = a.accumulate ? __bfloat162float(out[t * a.hidden + h]) : 0.0f;
    for (int j = 0; j < a.top_k; ++j) {
      const int p = t * a.top_k + j;
      if (valid_expert(a, a.topk_ids[p])) sum += a.topk_weights[p] * results[p][r];
    }
    out[t * a.hidden + h] = __float2bfloat16(sum);
  }
}

// ---- Larger batches: pairs sorted by expert (MoeWorkspace) ----

__global__ void __launch_bounds__(kAlignThreads)
    moe_align_kernel(const int32_t* ids, int n_pairs, int n_experts, MoeWorkspace w) {
  extern __shared__ int shared[];
  pdl_wait();
  int* count = shared;
  int* cursor = shared + n_experts;
  for (int e = threadIdx.x; e < n_experts; e += blockDim.x) count[e] = 0;
  __syncthreads();
  for (int p = threadIdx.x; p < n_pairs; p += blockDim.x)
    if (ids[p] >= 0 && ids[p] < n_experts) atomicAdd(&count[ids[p]], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    int running = 0, n_active = 0;
    for (int e = 0; e < n_experts; ++e) {
      w.offsets[e] = cursor[e] = running;
      if (count[e] > 0) w.active[n_active++] = e;
      running += count[e];
    }
    w.offsets[n_experts] = running;
    w.active[n_experts] = n_active;
  }
  __syncthreads();
  for (int p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    if (ids[p] < 0 || ids[p] >= n_experts) continue;  // skipped again by the combine
    const int row = atomicAdd(&cursor[ids[p]], 1);
    w.sorted_pairs[row] = p;
    w.pair_rows[p] = row;
  }
}

// out[t] (+)= sum_j topk_weights[t, j] * expert_out[pair_rows[t * k + j]], 8 columns a thread.
__global__ void moe_combine_kernel(MoeExpertsArgs a, MoeWorkspace w) {
  pdl_wait();
  const int64_t t = blockIdx.x;
  auto* out = static_cast<bf16*>(a.out) + t * a.hidden;
  const auto* expert_out = static_cast<const bf16*>(w.expert_out);
  for (int64_t c = threadIdx.x * 8; c < a.hidden; c += blockDim.x * 8) {
    float sum[8] = {};
    if (a.accumulate) to_f32(load8(out + c), sum);
    for (int j = 0; j < a.top_k; ++j) {
      const int64_t p = t * a.top_k + j;
      if (!valid_expert(a, a.topk_ids[p])) continue;
      float y[8];
      to_f32(load8(expert_out + int64_t{w.pair_rows[p]} * a.hidden + c), y);
      const float weight = a.topk_weights[p];
#pragma unroll
      for (int i = 0; i < 8; ++i) sum[i] += weight * y[i];
    }
    store8(out + c, from_f32(sum));
  }
}

size_t align_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <bool kMxfp4>
void launch_small(const MoeExpertsArgs& args, const MoeWorkspace& workspace, cudaStream_t stream) {
  auto* activated = static_cast<bf16*>(workspace.activated);
  const int64_t n_pairs = args.n_tokens * args.top_k;
  const dim3 gate_up_grid(static_cast<unsigned>(ceil_div(args.inter, kWarps)),
                          static_cast<unsigned>(n_pairs));
  // No L2 prefetch of the routed experts' down weights during gate_up: it cost bf16 and MXFP4
  // experts ~3 us a layer (docs/performance-notes.md, "MoE experts").
  launch_pdl(moe_small_gate_up_kernel<kMxfp4>, gate_up_grid, kWarps * 32, 0, stream, args,
             activated);
  launch_pdl(moe_small_down_kernel<kMxfp4>, static_cast<unsigned>(ceil_div(args.hidden, kDownRows)),
             kWarps * 32, 0, stream, args, activated);
}

void launch_sorted(const MoeExpertsArgs& args, const MoeWorkspace& workspace, cudaStream_t stream) {
  const int64_t n_pairs = args.n_tokens * args.top_k;
  const size_t align_shared = 2 * size_t{static_cast<size_t>(args.n_experts)} * sizeof(int);
  launch_pdl(moe_align_kernel, 1, kAlignThreads, align_shared, stream, args.topk_ids,
             static_cast<int>(n_pairs), args.n_experts, workspace);
  launch_moe_gate_up_mma(args, workspace, stream);
  launch_moe_down_mma(args, workspace, stream);
  const int combine_threads = static_cast<int>(std::min<int64_t>(256, ceil_div(args.hidden, 8)));
  launch_pdl(moe_combine_kernel, static_cast<unsigned>(args.n_tokens), combine_threads, 0, stream,
             args, workspace);
}

template <bool kMxfp4>
void launch_experts(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                    cudaStream_t stream) {
  // The decode kernels where they apply (each checks its weights, token count and shapes).
  if (launch_moe_decode(args, workspace, stream) ||
      launch_moe_mxfp4_decode(args, workspace, stream))
    return;
  if (args.n_tokens <= kMoeSmallMaxTokens)
    launch_small<kMxfp4>(args, workspace, stream);
  else
    launch_sorted(args, workspace, stream);
}

}  // namespace

size_t moe_workspace_layout(void* base, int64_t n_pairs, int64_t n_experts, int64_t hidden,
                            int64_t inter, MoeWorkspace* out) {
  const size_t sizes[] = {(n_experts + 1) * sizeof(int32_t), (n_experts + 1) * sizeof(int32_t),
                          n_pairs * sizeof(int32_t),         n_pairs * sizeof(int32_t),
                          n_pairs * inter * sizeof(bf16),    n_pairs * hidden * sizeof(bf16)};
  void* pieces[6];
  size_t offset = 0;
  for (int i = 0; i < 6; ++i) {
    pieces[i] = base == nullptr ? nullptr : static_cast<char*>(base) + offset;
    offset += align_up(sizes[i]);
  }
  if (out != nullptr)
    *out = {static_cast<int32_t*>(pieces[0]),
            static_cast<int32_t*>(pieces[1]),
            static_cast<int32_t*>(pieces[2]),
            static_cast<int32_t*>(pieces[3]),
            pieces[4],
            pieces[5]};
  return offset;
}

void launch_moe_experts(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                        cudaStream_t stream) {
  if (args.n_tokens == 0) return;
  if (args.gate_up_scales != nullptr)
    launch_experts<true>(args, workspace, stream);
  else
    launch_experts<false>(args, workspace, stream);
}

}  // namespace hadron::cuda
