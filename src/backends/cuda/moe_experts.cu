// MoE expert computation: sort (token, slot) pairs by expert on the device, then one grouped
// pass per projection whose blocks each own some rows of one active expert's weight matrix
// and apply them to all of that expert's tokens (so each expert's weights are read once per
// step), then a per-token combine in slot order (deterministic: no atomics on outputs).
// No host synchronisation: usable inside CUDA graphs.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/moe_kernels.h"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

constexpr int kAlignThreads = 1024;
constexpr int kWarps = 8;   // output rows per block in the grouped products
constexpr int kUnroll = 4;  // 16-byte weight loads in flight per lane
constexpr int kTokens = 4;  // tokens sharing each weight load

__global__ void __launch_bounds__(kAlignThreads)
    moe_align_kernel(const int32_t* ids, int n_pairs, int n_experts, MoeWorkspace w) {
  extern __shared__ int shared[];
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

// acc[m][r] += dot(rows[r], x[m]) over k (a multiple of 8) for n_m <= kTokens tokens.
template <int kRows>
__device__ __forceinline__ void dot_rows(const bf16* const (&rows)[kRows],
                                         const bf16* const (&x)[kTokens], int n_m, int64_t k,
                                         int lane, float (&acc)[kTokens][kRows]) {
  const int64_t n_vec = k / 8;
  for (int64_t base = lane; base < n_vec; base += 32 * kUnroll) {
    Bf16x8 wv[kUnroll][kRows];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (base + u * 32 < n_vec) wv[u][r] = load8(rows[r] + (base + u * 32) * 8);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = base + u * 32;
      if (c >= n_vec) break;
#pragma unroll
      for (int m = 0; m < kTokens; ++m) {
        if (m >= n_m) break;
        float xf[8];
        to_f32(load8(x[m] + c * 8), xf);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          float wf[8];
          to_f32(wv[u][r], wf);
#pragma unroll
          for (int i = 0; i < 8; ++i) acc[m][r] += wf[i] * xf[i];
        }
      }
    }
  }
#pragma unroll
  for (int m = 0; m < kTokens; ++m)
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[m][r] = warp_sum(acc[m][r]);
}

__device__ __forceinline__ float activate(const MoeExpertsArgs& a, float gate, float up) {
  if (!a.interleaved_clamped) return gate / (1.0f + expf(-gate)) * up;
  gate = fminf(gate, a.swiglu_limit);
  up = fminf(fmaxf(up, -a.swiglu_limit), a.swiglu_limit);
  return (up + 1.0f) * gate / (1.0f + expf(-a.swiglu_alpha * gate));
}

__device__ __forceinline__ float bias_at(const void* bias, int64_t i) {
  return bias == nullptr ? 0.0f : __bfloat162float(static_cast<const bf16*>(bias)[i]);
}

// activated[row, i] = act(gate_i . x + b, up_i . x + b) for the rows of one active expert.
__global__ void __launch_bounds__(kWarps * 32)
    moe_gate_up_kernel(MoeExpertsArgs a, MoeWorkspace w) {
  if (blockIdx.y >= w.active[a.n_experts]) return;
  const int e = w.active[blockIdx.y], lane = threadIdx.x % 32;
  const int64_t i = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32;
  if (i >= a.inter) return;
  const int64_t gate_idx = a.interleaved_clamped ? 2 * i : i;
  const int64_t up_idx = a.interleaved_clamped ? 2 * i + 1 : a.inter + i;
  const auto* weights = static_cast<const bf16*>(a.gate_up) + e * 2 * a.inter * a.hidden;
  const bf16* const rows[2] = {weights + gate_idx * a.hidden, weights + up_idx * a.hidden};
  const float gate_bias = bias_at(a.gate_up_bias, e * 2 * a.inter + gate_idx);
  const float up_bias = bias_at(a.gate_up_bias, e * 2 * a.inter + up_idx);
  const int begin = w.offsets[e], end = w.offsets[e + 1];
  auto* activated = static_cast<bf16*>(w.activated);
  for (int m0 = begin; m0 < end; m0 += kTokens) {
    const int n_m = min(kTokens, end - m0);
    const bf16* x[kTokens];
#pragma unroll
    for (int m = 0; m < kTokens; ++m)
      x[m] = static_cast<const bf16*>(a.x) +
             int64_t{w.sorted_pairs[m0 + min(m, n_m - 1)] / a.top_k} * a.hidden;
    float acc[kTokens][2] = {};
    dot_rows<2>(rows, x, n_m, a.hidden, lane, acc);
    if (lane < n_m)  // lane m writes token m (registers indexed by a constant)
#pragma unroll
      for (int m = 0; m < kTokens; ++m)
        if (m == lane)
          activated[(m0 + m) * a.inter + i] =
              __float2bfloat16(activate(a, acc[m][0] + gate_bias, acc[m][1] + up_bias));
  }
}

// expert_out[row, h] = down_h . activated[row] + b for the rows of one active expert.
__global__ void __launch_bounds__(kWarps * 32) moe_down_kernel(MoeExpertsArgs a, MoeWorkspace w) {
  if (blockIdx.y >= w.active[a.n_experts]) return;
  const int e = w.active[blockIdx.y], lane = threadIdx.x % 32;
  const int64_t h = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32;
  if (h >= a.hidden) return;
  const bf16* const rows[1] = {static_cast<const bf16*>(a.down) + (e * a.hidden + h) * a.inter};
  const float bias = bias_at(a.down_bias, e * a.hidden + h);
  const int begin = w.offsets[e], end = w.offsets[e + 1];
  auto* expert_out = static_cast<bf16*>(w.expert_out);
  for (int m0 = begin; m0 < end; m0 += kTokens) {
    const int n_m = min(kTokens, end - m0);
    const bf16* x[kTokens];
#pragma unroll
    for (int m = 0; m < kTokens; ++m)
      x[m] = static_cast<const bf16*>(w.activated) + int64_t{m0 + min(m, n_m - 1)} * a.inter;
    float acc[kTokens][1] = {};
    dot_rows<1>(rows, x, n_m, a.inter, lane, acc);
    if (lane < n_m)
#pragma unroll
      for (int m = 0; m < kTokens; ++m)
        if (m == lane) expert_out[(m0 + m) * a.hidden + h] = __float2bfloat16(acc[m][0] + bias);
  }
}

// out[t] (+)= sum_j topk_weights[t, j] * expert_out[pair_rows[t * k + j]], 8 columns a thread.
__global__ void moe_combine_kernel(MoeExpertsArgs a, MoeWorkspace w) {
  const int64_t t = blockIdx.x;
  auto* out = static_cast<bf16*>(a.out) + t * a.hidden;
  const auto* expert_out = static_cast<const bf16*>(w.expert_out);
  for (int64_t c = threadIdx.x * 8; c < a.hidden; c += blockDim.x * 8) {
    float sum[8] = {};
    if (a.accumulate) to_f32(load8(out + c), sum);
    for (int j = 0; j < a.top_k; ++j) {
      const int64_t p = t * a.top_k + j;
      if (a.topk_ids[p] < 0 || a.topk_ids[p] >= a.n_experts) continue;
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
  const int64_t n_pairs = args.n_tokens * args.top_k;
  const size_t align_shared = 2 * size_t{static_cast<size_t>(args.n_experts)} * sizeof(int);
  moe_align_kernel<<<1, kAlignThreads, align_shared, stream>>>(
      args.topk_ids, static_cast<int>(n_pairs), args.n_experts, workspace);
  CUDA_CHECK_LAUNCH();
  // At most min(E, pairs) experts are active; blocks past the active count exit at once.
  const auto max_active = static_cast<unsigned>(std::min<int64_t>(args.n_experts, n_pairs));
  const dim3 gate_up_grid(static_cast<unsigned>(ceil_div(args.inter, kWarps)), max_active);
  moe_gate_up_kernel<<<gate_up_grid, kWarps * 32, 0, stream>>>(args, workspace);
  CUDA_CHECK_LAUNCH();
  const dim3 down_grid(static_cast<unsigned>(ceil_div(args.hidden, kWarps)), max_active);
  moe_down_kernel<<<down_grid, kWarps * 32, 0, stream>>>(args, workspace);
  CUDA_CHECK_LAUNCH();
  const int combine_threads = static_cast<int>(std::min<int64_t>(256, ceil_div(args.hidden, 8)));
  moe_combine_kernel<<<static_cast<unsigned>(args.n_tokens), combine_threads, 0, stream>>>(
      args, workspace);
  CUDA_CHECK_LAUNCH();
}

}  // namespace hadron::cuda
