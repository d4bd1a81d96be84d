// Skinny matrix product for decode (M <= 8 rows): bandwidth-bound, so the point is to keep
// every SM's loads in flight from the first cycle to the last.
//  - One resident wave: the grid holds as many warps as fit on the GPU at once, trimmed so
//    every warp owns the same number of weight rows (row r belongs to warp r mod n_warps).
//  - A lane streams 16-byte weight vectors of its warp's row, kChunk of them per step, and
//    issues the next step's loads (which may belong to its next row) before the current
//    step's arithmetic, so a warp always has loads outstanding.
//  - Each weight vector serves all M activation rows, which every block first stages in
//    shared memory (M * K * 2 bytes, up to kGemvStagedMaxBytes; wider rows are read from
//    global memory as the steps go). Read from L1/L2 instead, each step's activation loads
//    would wait a round trip after its weights arrived (down_proj's GEMV streamed 1.8 TB/s
//    that way, gate_up's with staged rows 2.8).
//  - Launched with programmatic dependent launch: a warp issues its first weight loads before
//    pdl_wait(), while the kernel that produces x is still finishing.
// The staged rows may be computed rather than copied (GemvInput): the residual add + RMSNorm
// in front (gemv_norm.cu), or SiLU-and-mul of [gate | up] rows (gemv_silu.cu), so that one
// kernel replaces two for decode-sized batches; every block computes them itself after the
// wait, while its first weight loads are in flight. What a block computes there delays its
// weight stream, so work that is the same in every block is better done once: a gated MLP's
// gate_up GEMV writes the activations itself (GemvOutput::kSiluPairs, gemv_norm_silu.cu).
// Shared by gemv.cu, gemv_norm.cu, gemv_silu.cu and gemv_norm_silu.cu, which instantiate it
// in four translation units.
#pragma once

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/rms_norm.cuh"
#include "backends/cuda/silu_mul.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda::gemv {

constexpr int kWarps = 8, kThreads = kWarps * 32;
constexpr int kChunk = 8;  // 16-byte weight loads per lane per step

// Where the kernel's input rows x come from.
enum class GemvInput {
  kGlobal,   // x itself, read from global memory step by step (rows wider than the stage)
  kStaged,   // x, copied into shared memory first
  kNorm,     // rms_norm(residual + add) * weight (GemvNormArgs), computed into shared memory
  kSiluMul,  // silu(gate) * up of x = [gate | up] rows of 2 * K, computed into shared memory
};

// The prologues below read their inputs (written by the kernel before, so in L2)
// kPrologueBatch vectors per thread at a time, all loads issued before the first is used: one
// L2 round trip per batch rather than per vector, while the weight stream waits for them.
constexpr int kPrologueBatch = 4;

// batched (vec.cuh) with the GEMV's threads and kPrologueBatch.
template <typename Values, typename Load, typename Use>
__device__ __forceinline__ void prologue_batched(int count, const Load& load, const Use& use) {
  batched<kThreads, kPrologueBatch, Values>(count, load, use);
}

// Copies the kM rows of x into shared memory.
template <int kM>
__device__ __forceinline__ void stage_prologue(const bf16* x, int k, bf16* xs) {
  prologue_batched<Bf16x8>(
      kM * (k / 8), [&](int c, Bf16x8& v) { v = load8(x + c * 8); },
      [&](int c, const Bf16x8& v) { store8(xs + c * 8, v); });
  __syncthreads();
}

// xs[m] = silu(gate[m]) * up[m] of gate_up = [gate | up] rows (silu_mul.cu's arithmetic, so
// the fused and the separate paths agree bit for bit); block 0 also writes it to activated.
template <int kM>
__device__ __forceinline__ void silu_mul_prologue(const bf16* gate_up, int k, bf16* xs,
                                                  bf16* activated) {
  struct GateUp {
    Bf16x8 gate, up;
  };
  const int n_vec = k / 8;
  const bool writer = blockIdx.x == 0;
  prologue_batched<GateUp>(
      kM * n_vec,
      [&](int c, GateUp& v) {
        const bf16* gate = gate_up + (int64_t{c / n_vec} * 2 * n_vec + c % n_vec) * 8;
        v = {load8(gate), load8(gate + k)};
      },
      [&](int c, const GateUp& v) {
        const Bf16x8 result = silu_mul8(v.gate, v.up);
        store8(xs + c * 8, result);
        if (writer) store8(activated + c * 8, result);
      });
  __syncthreads();
}

// x[m] = rms_norm(residual[m] + add[m]) * weight for the kM rows, into shared memory, with
// rms_norm.cu's steps (rms_norm.cuh) over the same thread layout, so the fused and the
// separate paths agree bit for bit. Block 0 also writes residual_out and normed. ahead: the
// norm weight's vectors threadIdx.x + j * kThreads (j < kAhead), loaded before pdl_wait() by
// the kernel (the weight is a constant); the rest, if any, are loaded here.
template <int kM, int kAhead>
__device__ __forceinline__ void norm_prologue(const GemvNormArgs& a, int k, bf16* xs,
                                              const Bf16x8 (&ahead)[kAhead > 0 ? kAhead : 1]) {
  const int n_vec = k / 8;
  const auto* add = static_cast<const bf16*>(a.add);
  const auto* residual = static_cast<const bf16*>(a.residual);
  auto* residual_out = static_cast<bf16*>(a.residual_out);
  auto* normed = static_cast<bf16*>(a.normed);
  const bool writer = blockIdx.x == 0;
  // Loads batched (vec.cuh) with at most kPrologueBatch vectors of each input in flight; the
  // arithmetic and its order are the loop's of rms_norm.cu.
  constexpr int kBatch = kPrologueBatch / kM > 0 ? kPrologueBatch / kM : 1;
  struct Rows {
    Bf16x8 residual[kM], add[kM];
  };
  float sum_squares[kM] = {};
  batched<kThreads, kBatch, Rows>(
      n_vec,
      [&](int c, Rows& v) {
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          const int64_t offset = int64_t{m} * k + c * 8;
          v.residual[m] = load8(residual + offset);
          if (add != nullptr) v.add[m] = load8(add + offset);
        }
      },
      [&](int c, const Rows& v) {
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          const int64_t offset = int64_t{m} * k + c * 8;
          Bf16x8 stream = v.residual[m];
          float values[8];
          if (add != nullptr) {
            stream = residual_add(stream, v.add[m], values);
            if (writer) store8(residual_out + offset, stream);
          } else {
            to_f32(stream, values);
          }
          store8(xs + offset, stream);
#pragma unroll
          for (int e = 0; e < 8; ++e) sum_squares[m] += values[e] * values[e];
        }
      });
  float inv_rms[kM];
  block_inv_rms<kThreads>(sum_squares, k, a.eps, inv_rms);
  const auto* weight = static_cast<const bf16*>(a.weight);
  const auto scale_vector = [&](int c, const Bf16x8& scale) {
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      const int64_t offset = int64_t{m} * k + c * 8;
      float values[8];
      to_f32(load8(xs + offset), values);
      const Bf16x8 result = normalise(values, inv_rms[m], scale);
      store8(xs + offset, result);
      if (writer) store8(normed + offset, result);
    }
  };
  // The vectors loaded before pdl_wait(), then the rest (the same threads' vectors) batched.
#pragma unroll
  for (int j = 0; j < kAhead; ++j) {
    const int c = threadIdx.x + j * kThreads;
    if (c < n_vec) scale_vector(c, ahead[j]);
  }
  const int rest = kAhead * kThreads;
  prologue_batched<Bf16x8>(
      n_vec - rest, [&](int c, Bf16x8& scale) { scale = load8(weight + (rest + c) * 8); },
      [&](int c, const Bf16x8& scale) { scale_vector(rest + c, scale); });
  __syncthreads();
}

// What the kernel writes for output row r (r < n).
enum class GemvOutput {
  kRows,       // out[m][r] = w[r] . x[m] (+ bias[r])
  kSiluPairs,  // out[m][r] = silu(w[r] . x[m]) * (w[n + r] . x[m]): the products of a
               // [gate | up] weight of 2n rows, each rounded to bf16 (the separate path's
               // gate_up), then silu_mul's arithmetic. One warp computes both products of a
               // row, so SiLU runs once per element instead of in every block of the next GEMV.
};

// Unless kInput is kGlobal, every block first stages or computes x in shared memory.
// activated: kSiluMul's copy of the computed rows (else unused).
template <int kM, typename Out, GemvInput kInput, GemvOutput kOutput = GemvOutput::kRows>
__global__ void __launch_bounds__(kThreads, 2)
    gemv_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w,
                const Out* __restrict__ bias, Out* __restrict__ out, int n, int k,
                GemvNormArgs norm, bf16* activated) {
  constexpr bool kPairs = kOutput == GemvOutput::kSiluPairs;
  extern __shared__ __align__(16) unsigned char gemv_shared[];
  const int lane = threadIdx.x % 32;
  const int n_warps = gridDim.x * kWarps;
  const int first_row = blockIdx.x * kWarps + threadIdx.x / 32;
  const int n_vec = k / 8;
  // Steps over one weight row, and per output row (over both of a pair's weight rows).
  const int steps_per_w_row = (n_vec + 32 * kChunk - 1) / (32 * kChunk);
  const int steps_per_row = steps_per_w_row * (kPairs ? 2 : 1);
  const int my_rows = first_row < n ? (n - 1 - first_row) / n_warps + 1 : 0;
  const int n_steps = my_rows * steps_per_row;

  // Step `step` of this warp: output row, and the vector offset within its weight row.
  auto step_row = [&](int step) { return first_row + (step / steps_per_row) * n_warps; };
  auto step_base = [&](int step) {
    return (step % steps_per_row % steps_per_w_row) * 32 * kChunk + lane;
  };
  // use(u, vector) for each of this lane's kChunk weight vectors of step `step`.
  auto for_step_vectors = [&](int step, const auto& use) {
    int w_row = step_row(step);
    if (kPairs && step % steps_per_row >= steps_per_w_row) w_row += n;  // the up row
    const int base = step_base(step);
    const bf16* w_row_ptr = w + int64_t{w_row} * k;
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const int c = base + u * 32;
      if (c < n_vec) use(u, w_row_ptr + int64_t{c} * 8);
    }
  };
  auto load_step = [&](int step, Bf16x8(&buffer)[kChunk]) {
    for_step_vectors(step, [&](int u, const bf16* p) { buffer[u] = load8_streaming(p); });
  };

  // Before the wait (the kernel before may still be running): the first step's loads, and
  // (kNorm) the norm weight's first vectors, also a constant.
  Bf16x8 current[kChunk], next[kChunk];
  if (n_steps > 0) load_step(0, current);
  constexpr int kNormAhead = kInput == GemvInput::kNorm && kM <= 4 ? 2 : 0;
  Bf16x8 norm_ahead[kNormAhead > 0 ? kNormAhead : 1];
  if constexpr (kNormAhead > 0) {
#pragma unroll
    for (int j = 0; j < kNormAhead; ++j) {
      const int c = threadIdx.x + j * kThreads;
      if (c < n_vec) norm_ahead[j] = load8(static_cast<const bf16*>(norm.weight) + c * 8);
    }
  }
  pdl_wait();
  // One row: the second step's weights asked of L2 now, so the memory streams while the prologue
  // stages x instead of idling until the loop issues them; one prefetch a 128-byte line (8
  // lanes' vectors). Two steps ahead, before the wait, or a step ahead all along the loop
  // measured slower; two or more rows: not measured (docs/performance-notes.md, "Decode GEMV").
  if constexpr (kM == 1) {
    if (n_steps > 1 && lane % 8 == 0)
      for_step_vectors(1, [](int, const bf16* p) { prefetch_l2(p); });
  }
  pdl_launch_dependents();
  auto* xs = reinterpret_cast<bf16*>(gemv_shared);
  if constexpr (kInput == GemvInput::kStaged) stage_prologue<kM>(x, k, xs);
  if constexpr (kInput == GemvInput::kNorm) norm_prologue<kM, kNormAhead>(norm, k, xs, norm_ahead);
  if constexpr (kInput == GemvInput::kSiluMul) silu_mul_prologue<kM>(x, k, xs, activated);
  if constexpr (kInput != GemvInput::kGlobal) x = xs;

  float acc[kM] = {};
  float gate[kM];  // kPairs: the row's first product, rounded to bf16
  for (int step = 0; step < n_steps; ++step) {
    if (step + 1 < n_steps) load_step(step + 1, next);
    const int base = step_base(step);
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const int c = base + u * 32;
      if (c >= n_vec) break;
      float wf[8];
      to_f32(current[u], wf);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float xf[8];
        to_f32(load8(x + int64_t{m} * k + int64_t{c} * 8), xf);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[m] += wf[e] * xf[e];
      }
    }
    const int in_row = step % steps_per_row;
    if (kPairs && in_row == steps_per_w_row - 1) {  // the gate product is done
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        gate[m] = __bfloat162float(__float2bfloat16(warp_sum(acc[m])));
        acc[m] = 0;
      }
    } else if (in_row == steps_per_row - 1) {
      const int row = step_row(step);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float value = warp_sum(acc[m]);
        acc[m] = 0;
        if (lane == 0) {
          if constexpr (kPairs) {
            value = silu_mul1(gate[m], __bfloat162float(__float2bfloat16(value)));
          } else if (bias != nullptr) {
            value += static_cast<float>(bias[row]);
          }
          if constexpr (sizeof(Out) == 4) {
            out[int64_t{m} * n + row] = value;
          } else {
            out[int64_t{m} * n + row] = __float2bfloat16(value);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kChunk; ++u) current[u] = next[u];
  }
}

// Blocks for one resident wave (launch.cuh's one_wave_blocks).
template <int kM, typename Out, GemvInput kInput, GemvOutput kOutput>
int64_t plan_blocks(int64_t n) {
  static const int64_t resident =
      resident_warps(gemv_kernel<kM, Out, kInput, kOutput>, kThreads,
                     kInput == GemvInput::kGlobal ? 0 : kGemvStagedMaxBytes);
  return one_wave_blocks(resident, n, kWarps);
}

// x: kNorm: null (norm has the inputs); kSiluMul: the [gate | up] rows of 2 * k. n: output
// rows (kSiluPairs: half of w's).
template <int kM, typename Out, GemvInput kInput, GemvOutput kOutput = GemvOutput::kRows>
void launch_gemv_typed(const void* x, const void* w, const void* bias, void* out, int64_t n,
                       int64_t k, const GemvNormArgs& norm, void* activated, cudaStream_t stream) {
  const size_t shared_bytes = kInput == GemvInput::kGlobal ? 0 : kM * k * sizeof(bf16);
  launch_pdl(gemv_kernel<kM, Out, kInput, kOutput>, dim3(plan_blocks<kM, Out, kInput, kOutput>(n)),
             dim3(kThreads), shared_bytes, stream, static_cast<const bf16*>(x),
             static_cast<const bf16*>(w), static_cast<const Out*>(bias), static_cast<Out*>(out),
             static_cast<int>(n), static_cast<int>(k), norm, static_cast<bf16*>(activated));
}

// launch_gemv_typed<kM> for the m given at run time (1 to kGemvMaxRows): launch.template
// operator()<kM>().
template <typename Launch>
void dispatch_rows(int64_t m, const char* what, const Launch& launch) {
  switch (m) {
    case 1:
      return launch.template operator()<1>();
    case 2:
      return launch.template operator()<2>();
    case 3:
      return launch.template operator()<3>();
    case 4:
      return launch.template operator()<4>();
    case 5:
      return launch.template operator()<5>();
    case 6:
      return launch.template operator()<6>();
    case 7:
      return launch.template operator()<7>();
    case 8:
      return launch.template operator()<8>();
    default:
      fail_dispatch(what, static_cast<int>(m), {1, 2, 3, 4, 5, 6, 7, 8});
  }
}

}  // namespace hadron::cuda::gemv
