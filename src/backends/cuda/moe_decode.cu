// bf16 MoE experts for decode-sized batches (up to kMoeSmallMaxTokens tokens) as two GEMVs
// over virtual rows, streamed the way gemv.cuh streams a dense GEMV: one resident wave of
// warps, each owning every n_warps-th virtual row, a lane issuing the next step's kChunk
// 16-byte weight loads before the current step's arithmetic, and the input rows staged in
// shared memory first. (moe_experts.cu's small-batch kernels give each 8 weight rows a block
// of their own, each waiting out its loads once, and are slower at these sizes.)
//  - gate_up: virtual row (pair p, intermediate i) = expert e's gate row i then its up row i
//    (hidden values each), times x of p's token; its two sums give activated[p, i] =
//    act(gate + b, up + b).
//  - down: virtual row (token t, column h) = row h of each of t's top_k experts' down
//    matrices, one after another (inter values each), times activated of t's pairs; a
//    segment's sums are scaled by the pair's routing weight, so the row's total is the
//    weighted combine: out[t, h] (+)= sum_j w[t, j] (down_e(t,j)[h] . activated[t, j] + b).
// Experts shared by tokens are read once per pair (the pairs are few at these sizes).
// Pairs with an expert id out of range are skipped, as by the other paths.
// bf16 weights only: a variant that decoded MXFP4 vectors here was bound by the instructions
// that decode the weights, and lost to moe_experts.cu's small-batch kernels
// (docs/performance-notes.md, "MoE experts"); MXFP4 runs on tensor cores (moe_mxfp4_decode.cu).
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/moe_grouped_gemm.cuh"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/moe_weights.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;
constexpr int kChunk = 8;       // 16-byte weight vectors per lane per step
constexpr int kStageBatch = 4;  // input vectors a thread loads before storing the first
constexpr int kMaxPairs = kMoeSmallMaxTokens * 32;  // top-k <= 32
// Staged input rows per block: two blocks (16 warps) fit an SM with 100 KB each.
constexpr int64_t kMaxStagedBytes = 100 * 1024;

// One 16-byte weight vector of a virtual row: where it is, and what it multiplies.
struct VectorRef {
  const uint4* weights;  // null: an invalid expert (contributes nothing)
  const bf16* x;         // the 8 staged input values it multiplies
  float multiplier;      // down: the pair's routing weight; gate_up: 1
  bool up;               // gate_up: in the up half of the row
};

// Geometry of a launch: virtual rows of n_vec vectors, in segments of segment_vec.
template <bool kDown>
struct VirtualRows {
  const MoeExpertsArgs& a;
  const int* ids;             // staged topk_ids
  const float* pair_weights;  // staged topk_weights
  const bf16* xs;             // staged input rows
  int segment_vec, n_vec;
  unsigned segment_magic;  // c / segment_vec == __umulhi(c, segment_magic) for small c

  __device__ VirtualRows(const MoeExpertsArgs& args, const int* ids_, const float* weights_,
                         const bf16* xs_)
      : a(args), ids(ids_), pair_weights(weights_), xs(xs_) {
    const int64_t k_len = kDown ? a.inter : a.hidden;
    segment_vec = static_cast<int>(k_len / 8);
    n_vec = segment_vec * (kDown ? a.top_k : 2);
    segment_magic = static_cast<unsigned>((uint64_t{1} << 32) / segment_vec + 1);
  }

  __device__ bool valid(int e) const { return e >= 0 && e < a.n_experts; }

  // What a virtual row's vectors share, found once per step (divisions, routing lookups).
  struct Row {
    int first;   // down: token t's first pair; gate_up: pair p
    int column;  // down: output column h; gate_up: intermediate index i
    int e;       // gate_up: p's expert
  };
  __device__ Row row(int index) const {
    if constexpr (kDown) {
      const int hidden = static_cast<int>(a.hidden);
      return {index / hidden * a.top_k, index % hidden, 0};
    } else {
      const int inter = static_cast<int>(a.inter), p = index / inter;
      return {p, index % inter, ids[p]};
    }
  }

  // Vector c of a virtual row.
  __device__ VectorRef locate(const Row& r, int c) const {
    int segment, p, e;
    int64_t weight_row;
    float multiplier = 1.0f;
    if constexpr (kDown) {
      segment = static_cast<int>(__umulhi(static_cast<unsigned>(c), segment_magic));
      p = r.first + segment;
      e = ids[p];
      weight_row = int64_t{e} * a.hidden + r.column;
      multiplier = pair_weights[p];
    } else {
      segment = c >= segment_vec;
      p = r.first;
      e = r.e;
      weight_row = moe_gate_up_row(a, e, r.column, segment == 1);
    }
    const int cc = c - segment * segment_vec;
    const int x_row = kDown ? p : p / a.top_k;
    const int64_t vector = weight_row * segment_vec + cc;
    const void* base = kDown ? a.down : a.gate_up;
    return {valid(e) ? static_cast<const uint4*>(base) + vector : nullptr,
            xs + (int64_t{x_row} * segment_vec + cc) * 8, multiplier, segment == 1};
  }
};

// w . x over one vector's 8 values, in fp32.
__device__ __forceinline__ float dot_vector(const uint4& w, const bf16* x) {
  float wf[8], xf[8], sum = 0;
  to_f32(reinterpret_cast<const Bf16x8&>(w), wf);
  to_f32(load8(x), xf);
#pragma unroll
  for (int e = 0; e < 8; ++e) sum += wf[e] * xf[e];
  return sum;
}

// kDown: the down + combine GEMV into a.out; else the gate_up GEMV into activated.
// Launched with PDL. The down kernel reads topk_ids and topk_weights before its wait: they
// come from the router two launches back, which finished before the gate_up kernel's wait
// returned, and the gate_up kernel releases this one only after that wait.
template <bool kDown>
__global__ void __launch_bounds__(kThreads, 2)
    moe_decode_kernel(MoeExpertsArgs a, bf16* activated) {
  extern __shared__ __align__(16) unsigned char decode_shared[];
  __shared__ int ids[kMaxPairs];
  __shared__ float pair_weights[kMaxPairs];
  const int n_pairs = static_cast<int>(a.n_tokens) * a.top_k;
  auto stage_routing = [&] {
    for (int p = threadIdx.x; p < n_pairs; p += kThreads) {
      ids[p] = a.topk_ids[p];
      pair_weights[p] = a.topk_weights[p];
    }
    __syncthreads();
  };
  if constexpr (kDown) stage_routing();

  auto* xs = reinterpret_cast<bf16*>(decode_shared);
  const VirtualRows<kDown> rows(a, ids, pair_weights, xs);
  const int lane = threadIdx.x % 32;
  const int n_warps = gridDim.x * kWarps;
  const int first_row = blockIdx.x * kWarps + threadIdx.x / 32;
  const int n_rows = static_cast<int>(kDown ? a.n_tokens * a.hidden : n_pairs * a.inter);
  const int steps_per_row = (rows.n_vec + 32 * kChunk - 1) / (32 * kChunk);
  const int my_rows = first_row < n_rows ? (n_rows - 1 - first_row) / n_warps + 1 : 0;
  const int n_steps = my_rows * steps_per_row;
  auto row_of = [&](int step) { return first_row + (step / steps_per_row) * n_warps; };
  auto vector_of = [&](int step, int u) {
    return (step % steps_per_row) * 32 * kChunk + u * 32 + lane;
  };

  auto load_step = [&](int step, uint4(&buffer)[kChunk]) {
    const auto row = rows.row(row_of(step));
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const int c = vector_of(step, u);
      const VectorRef ref = rows.locate(row, min(c, rows.n_vec - 1));
      const bool load = c < rows.n_vec && ref.weights != nullptr;
      buffer[u] = load ? load_weights(ref.weights) : make_uint4(0, 0, 0, 0);
    }
  };

  uint4 current[kChunk], next[kChunk];
  if constexpr (kDown) {
    if (n_steps > 0) load_step(0, current);
  }
  pdl_wait();
  pdl_launch_dependents();
  // gate_up: the routing (a pair a thread: kMaxPairs <= kThreads) is read into registers and
  // stored after x's loads are issued, so both cost one round trip and one barrier.
  static_assert(kMaxPairs <= kThreads);
  const bool routing_here = !kDown && threadIdx.x < n_pairs;
  int pair_id = 0;
  float pair_weight = 0;
  if (routing_here) {
    pair_id = a.topk_ids[threadIdx.x];
    pair_weight = a.topk_weights[threadIdx.x];
  }
  {  // the input rows: x [n_tokens, hidden] or activated [n_pairs, inter]
    const bf16* source = kDown ? activated : static_cast<const bf16*>(a.x);
    const int64_t n_values = kDown ? n_pairs * a.inter : a.n_tokens * a.hidden;
    batched<kThreads, kStageBatch, Bf16x8>(
        static_cast<int>(n_values / 8), [&](int c, Bf16x8& v) { v = load8(source + c * 8); },
        [&](int c, const Bf16x8& v) { store8(xs + c * 8, v); });
    if (routing_here) {
      ids[threadIdx.x] = pair_id;
      pair_weights[threadIdx.x] = pair_weight;
    }
    __syncthreads();
  }
  if constexpr (!kDown) {
    if (n_steps > 0) load_step(0, current);
  }

  float acc = 0, acc_up = 0;
  for (int step = 0; step < n_steps; ++step) {
    if (step + 1 < n_steps) load_step(step + 1, next);
    const auto row = rows.row(row_of(step));
    // Vectors past the row's end were loaded as zeros: they add nothing, so
    // every step runs the same straight-line code (independent chains the compiler interleaves).
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const VectorRef ref = rows.locate(row, min(vector_of(step, u), rows.n_vec - 1));
      const float part = dot_vector(current[u], ref.x);
      if constexpr (kDown) {
        acc += part * ref.multiplier;
      } else {
        acc += ref.up ? 0.0f : part;
        acc_up += ref.up ? part : 0.0f;
      }
    }
    if (step % steps_per_row == steps_per_row - 1) {
      const float sum = warp_sum(acc), sum_up = kDown ? 0.0f : warp_sum(acc_up);
      acc = acc_up = 0;
      if (lane == 0) {
        if constexpr (kDown) {
          float value = sum;
          for (int j = 0; j < a.top_k; ++j) {
            const int p = row.first + j, e = ids[p];
            if (rows.valid(e))
              value += pair_weights[p] * moe_bias(a.down_bias, e * a.hidden + row.column);
          }
          auto* out = static_cast<bf16*>(a.out) + row.first / a.top_k * a.hidden + row.column;
          if (a.accumulate) value += __bfloat162float(*out);
          *out = __float2bfloat16(value);
        } else {
          const int e = row.e, i = row.column;
          float value = 0;
          if (rows.valid(e))
            value = moe_activate(a, sum + moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, false)),
                                 sum_up + moe_bias(a.gate_up_bias, moe_gate_up_row(a, e, i, true)));
          activated[int64_t{row.first} * a.inter + i] = __float2bfloat16(value);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kChunk; ++u) current[u] = next[u];
  }
}

// Blocks for one resident wave (launch.cuh's one_wave_blocks).
template <bool kDown>
int64_t plan_blocks(int64_t n_rows) {
  static const int64_t resident =
      resident_warps(moe_decode_kernel<kDown>, kThreads, kMaxStagedBytes);
  return one_wave_blocks(resident, n_rows, kWarps);
}

template <bool kDown>
void launch(const MoeExpertsArgs& args, bf16* activated, size_t staged_bytes, cudaStream_t stream) {
  const int64_t n_rows =
      kDown ? args.n_tokens * args.hidden : args.n_tokens * args.top_k * args.inter;
  // Per launch, not once: the attribute belongs to the current device.
  CUDA_CHECK(cudaFuncSetAttribute(moe_decode_kernel<kDown>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kMaxStagedBytes)));
  launch_pdl(moe_decode_kernel<kDown>, dim3(plan_blocks<kDown>(n_rows)), dim3(kThreads),
             staged_bytes, stream, args, activated);
}

}  // namespace

bool launch_moe_decode(const MoeExpertsArgs& args, const MoeWorkspace& workspace,
                       cudaStream_t stream) {
  const int64_t n_pairs = args.n_tokens * args.top_k;
  const size_t x_bytes = args.n_tokens * args.hidden * sizeof(bf16);
  const size_t activated_bytes = n_pairs * args.inter * sizeof(bf16);
  if (args.gate_up_scales != nullptr || args.n_tokens > kMoeSmallMaxTokens || n_pairs > kMaxPairs ||
      std::max(x_bytes, activated_bytes) > kMaxStagedBytes)
    return false;
  auto* activated = static_cast<bf16*>(workspace.activated);
  launch<false>(args, activated, x_bytes, stream);
  launch<true>(args, activated, activated_bytes, stream);
  return true;
}

}  // namespace hadron::cuda
