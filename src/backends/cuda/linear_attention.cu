// Gated DeltaNet kernels: the causal convolution with its per-sequence state, the gated delta
// rule (recurrent form), the gated RMSNorm and the sigmoid gate.
//
// The delta rule keeps one sequence's [Dk, Dv] state of one value head in the registers of a
// block for all of its rows this step: block (column tile, value head, sequence) owns 32 value
// columns; each column is spread over the 4 adjacent lanes of a warp, lane r holding key rows
// r, r + 4, r + 8, ..., so S^T k and S^T q need two shuffles. Rows are staged kChunk at a time
// in shared memory, their q and k L2-normalised there, then walked one by one with no barrier.
// Key rows past Dk (up to the kernel's DK) and value columns past Dv are zero and not written.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/vec.cuh"

namespace hadron::cuda {
namespace {

__device__ __forceinline__ float load_param(const void* p, bool f32, int64_t i) {
  return f32 ? static_cast<const float*>(p)[i] : __bfloat162float(static_cast<const bf16*>(p)[i]);
}
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
// torch.nn.functional.softplus (beta 1, threshold 20).
__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(__expf(x)); }

// One sequence's rows and state slot as a block sees them.
struct SeqRows {
  int begin, end, slot;
  bool fresh;
  __device__ bool empty() const { return slot < 0 || begin >= end; }
};
__device__ __forceinline__ SeqRows seq_rows(const LinearAttentionArgs& args, int s) {
  SeqRows rows;
  rows.begin = args.cu_seqlens_q[s];
  rows.end = args.cu_seqlens_q[s + 1];
  rows.slot = args.state_slots[s];
  rows.fresh = rows.begin < rows.end && args.positions[rows.begin] == 0;
  return rows;
}

constexpr int kConvThreads = 128;  // channels per block
constexpr int kConvTileRows = 64;  // rows per block

// The K - 1 inputs before row t0 of a sequence: from x, or before its first row from its state
// (zeros when it starts fresh). window[j] is the input at t0 - (K - 1) + j.
template <int K>
__device__ __forceinline__ void conv_history(const SeqRows& seq, int t0, const bf16* x,
                                             const bf16* state, int channels, int c,
                                             float (&window)[K]) {
  for (int j = 0; j < K - 1; ++j) {
    const int t = t0 - (K - 1) + j;
    window[j] = t >= seq.begin ? __bfloat162float(x[int64_t{t} * channels + c])
                : seq.fresh    ? 0.0f
                               : __bfloat162float(state[t - seq.begin + K - 1]);
  }
}

// After the convolution has read them: the sequence's state becomes its last K - 1 inputs.
// Entry j moves from old entry j + n (n rows this step), so ascending j is safe in place.
template <int K>
__device__ __forceinline__ void conv_state_update(const SeqRows& seq, const bf16* x, bf16* state,
                                                  int channels, int c) {
  for (int j = 0; j < K - 1; ++j) {
    const int t = seq.end - (K - 1) + j;
    state[j] = t >= seq.begin ? x[int64_t{t} * channels + c]
               : seq.fresh    ? __float2bfloat16(0.0f)
                              : state[t - seq.begin + K - 1];
  }
}

// Block (channel tile, sequence, row tile): out rows [t0, t0 + kConvTileRows) of its channels.
// When one tile holds every sequence's rows (update_state: decode and short prefills) the block
// also rolls the state forward; else conv_state_update_kernel does, once every tile has read it.
template <int K>
__global__ void causal_conv1d_kernel(LinearAttentionArgs args, const bf16* x, const void* weight,
                                     bool weight_f32, bf16* conv_states, bf16* out, int channels,
                                     bool update_state) {
  pdl_wait();
  const int c = blockIdx.x * kConvThreads + threadIdx.x;
  const SeqRows seq = seq_rows(args, blockIdx.y);
  const int t0 = seq.begin + blockIdx.z * kConvTileRows;
  if (seq.empty() || c >= channels || t0 >= seq.end) return;
  const int t1 = min(seq.end, t0 + kConvTileRows);
  float w[K], window[K];  // window[K - 1] is the current input
  for (int j = 0; j < K; ++j) w[j] = load_param(weight, weight_f32, int64_t{c} * K + j);
  bf16* state = conv_states + (int64_t{seq.slot} * channels + c) * (K - 1);
  conv_history<K>(seq, t0, x, state, channels, c, window);
  for (int t = t0; t < t1; ++t) {
    window[K - 1] = __bfloat162float(x[int64_t{t} * channels + c]);
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j) acc += w[j] * window[j];
    out[int64_t{t} * channels + c] = __float2bfloat16(acc * sigmoid(acc));
#pragma unroll
    for (int j = 0; j < K - 1; ++j) window[j] = window[j + 1];
  }
  if (update_state) conv_state_update<K>(seq, x, state, channels, c);
}

template <int K>
__global__ void conv_state_update_kernel(LinearAttentionArgs args, const bf16* x, bf16* conv_states,
                                         int channels) {
  pdl_wait();
  const int c = blockIdx.x * kConvThreads + threadIdx.x;
  const SeqRows seq = seq_rows(args, blockIdx.y);
  if (seq.empty() || c >= channels) return;
  conv_state_update<K>(seq, x, conv_states + (int64_t{seq.slot} * channels + c) * (K - 1), channels,
                       c);
}

template <int K>
void launch_conv(const LinearAttentionArgs& args, const void* x, const void* weight,
                 bool weight_f32, void* conv_states, void* out, int channels, cudaStream_t stream) {
  const auto channel_blocks = static_cast<unsigned>(ceil_div(channels, kConvThreads));
  const auto row_tiles = static_cast<unsigned>(ceil_div(args.max_q_len, kConvTileRows));
  const auto n_seqs = static_cast<unsigned>(args.n_seqs);
  const bool one_tile = row_tiles == 1;
  launch_pdl(causal_conv1d_kernel<K>, dim3(channel_blocks, n_seqs, row_tiles), dim3(kConvThreads),
             0, stream, args, static_cast<const bf16*>(x), weight, weight_f32,
             static_cast<bf16*>(conv_states), static_cast<bf16*>(out), channels, one_tile);
  if (!one_tile)
    launch_pdl(conv_state_update_kernel<K>, dim3(channel_blocks, n_seqs), dim3(kConvThreads), 0,
               stream, args, static_cast<const bf16*>(x), static_cast<bf16*>(conv_states),
               channels);
}

constexpr int kDeltaThreads = 128;  // 4 warps: 32 value columns x 4 lanes each
constexpr int kDeltaColumns = 32;
constexpr int kChunk = 16;  // rows staged in shared memory at a time

struct DeltaArgs {
  LinearAttentionArgs seqs;
  DeltaRuleShape shape;
  const bf16* qkv;
  const float* ba;
  const void* a_log;
  const void* dt_bias;
  bool a_log_f32, dt_bias_f32;
  float* states;
  bf16* out;
};

// Stages rows [t0, t0 + n) of the block's key head (q, k) and value columns, with each row's
// beta and decay, and L2-normalises q (times Dk^-1/2) and k as transformers' l2norm (eps 1e-6).
template <int DK>
__device__ void stage_chunk(const DeltaArgs& a, int h, int column0, int t0, int n,
                            float (&q)[kChunk][DK], float (&k)[kChunk][DK],
                            float (&v)[kChunk][kDeltaColumns], float (&beta)[kChunk],
                            float (&decay)[kChunk]) {
  const int hk = h / (a.shape.n_value_heads / a.shape.n_key_heads);
  const int dk = a.shape.key_head_dim, dv = a.shape.value_head_dim;
  const int key_dim = a.shape.n_key_heads * dk;
  const int64_t width = 2 * int64_t{key_dim} + int64_t{a.shape.n_value_heads} * dv;
  for (int i = threadIdx.x; i < n * DK; i += kDeltaThreads) {
    const int t = i / DK, d = i % DK;
    const bf16* row = a.qkv + (t0 + t) * width + hk * dk + d;
    q[t][d] = d < dk ? __bfloat162float(row[0]) : 0.0f;
    k[t][d] = d < dk ? __bfloat162float(row[key_dim]) : 0.0f;
  }
  for (int i = threadIdx.x; i < n * kDeltaColumns; i += kDeltaThreads) {
    const int t = i / kDeltaColumns, j = column0 + i % kDeltaColumns;
    v[t][i % kDeltaColumns] =
        j < dv ? __bfloat162float(a.qkv[(t0 + t) * width + 2 * key_dim + int64_t{h} * dv + j])
               : 0.0f;
  }
  if (threadIdx.x < n) {
    const int hv = a.shape.n_value_heads, t = t0 + threadIdx.x;
    const float b = a.ba[int64_t{t} * 2 * hv + h];
    const float g_in = a.ba[int64_t{t} * 2 * hv + hv + h];
    beta[threadIdx.x] = sigmoid(b);
    decay[threadIdx.x] = __expf(-__expf(load_param(a.a_log, a.a_log_f32, h)) *
                                softplus(g_in + load_param(a.dt_bias, a.dt_bias_f32, h)));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int vec = warp; vec < 2 * n; vec += kDeltaThreads / 32) {
    float* x = vec < n ? q[vec] : k[vec - n];
    float sum_squares = 0.0f;
    for (int i = lane; i < DK; i += 32) sum_squares += x[i] * x[i];
    sum_squares = warp_sum(sum_squares);
    const float scale = vec < n ? rsqrtf(static_cast<float>(dk)) : 1.0f;
    const float inv = scale / sqrtf(sum_squares + 1e-6f);
    for (int i = lane; i < DK; i += 32) x[i] *= inv;
  }
  __syncthreads();
}

template <int DK>
__global__ void __launch_bounds__(kDeltaThreads) gated_delta_rule_kernel(DeltaArgs a) {
  constexpr int kRows = DK / 4;  // key rows of the state per thread
  __shared__ float q[kChunk][DK], k[kChunk][DK], v[kChunk][kDeltaColumns];
  __shared__ float beta[kChunk], decay[kChunk];
  pdl_wait();
  const int h = blockIdx.y, column0 = blockIdx.x * kDeltaColumns;
  const SeqRows seq = seq_rows(a.seqs, blockIdx.z);
  if (seq.empty()) return;
  const int lane = threadIdx.x % 32, part = lane % 4;
  const int column = threadIdx.x / 32 * 8 + lane / 4;  // of the tile
  const int hv = a.shape.n_value_heads, dk = a.shape.key_head_dim, dv = a.shape.value_head_dim;
  const bool owned = column0 + column < dv;
  float* state = a.states + (int64_t{seq.slot} * hv + h) * dk * dv + column0 + column;
  float s[kRows];
#pragma unroll
  for (int m = 0; m < kRows; ++m) {
    const int row = part + 4 * m;
    s[m] = seq.fresh || !owned || row >= dk ? 0.0f : state[int64_t{row} * dv];
  }
  for (int t0 = seq.begin; t0 < seq.end; t0 += kChunk) {
    const int n = min(kChunk, seq.end - t0);
    stage_chunk<DK>(a, h, column0, t0, n, q, k, v, beta, decay);
    for (int t = 0; t < n; ++t) {
      float memory = 0.0f;  // (S^T k)[column] after the decay
#pragma unroll
      for (int m = 0; m < kRows; ++m) {
        s[m] *= decay[t];
        memory += s[m] * k[t][part + 4 * m];
      }
      memory += __shfl_xor_sync(0xffffffffu, memory, 1);
      memory += __shfl_xor_sync(0xffffffffu, memory, 2);
      const float delta = (v[t][column] - memory) * beta[t];
      float o = 0.0f;
#pragma unroll
      for (int m = 0; m < kRows; ++m) {
        s[m] += k[t][part + 4 * m] * delta;
        o += s[m] * q[t][part + 4 * m];
      }
      o += __shfl_xor_sync(0xffffffffu, o, 1);
      o += __shfl_xor_sync(0xffffffffu, o, 2);
      if (part == 0 && owned)
        a.out[(int64_t{t0 + t} * hv + h) * dv + column0 + column] = __float2bfloat16(o);
    }
    __syncthreads();  // before the next chunk overwrites the staged rows
  }
  if (!owned) return;
#pragma unroll
  for (int m = 0; m < kRows; ++m)
    if (part + 4 * m < dk) state[int64_t{part + 4 * m} * dv] = s[m];
}

// One warp per row; each lane holds width / 32 values.
__global__ void rms_norm_gated_kernel(const bf16* x, const bf16* gate, const void* weight,
                                      bool weight_f32, float eps, bf16* out, int64_t n_rows,
                                      int width) {
  pdl_wait();
  const int64_t row = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n_rows) return;
  float sum_squares = 0.0f;
  for (int i = lane; i < width; i += 32) {
    const float value = __bfloat162float(x[row * width + i]);
    sum_squares += value * value;
  }
  const float inv = rsqrtf(warp_sum(sum_squares) / static_cast<float>(width) + eps);
  for (int i = lane; i < width; i += 32) {
    const float g = __bfloat162float(gate[row * width + i]);
    const float normed = __bfloat162float(x[row * width + i]) * inv;
    out[row * width + i] =
        __float2bfloat16(normed * load_param(weight, weight_f32, i) * g * sigmoid(g));
  }
}

__global__ void sigmoid_mul_kernel(const bf16* x, const bf16* gate, bf16* out, int64_t n,
                                   int64_t width, int64_t gate_width) {
  pdl_wait();
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  const int64_t row = i / width;
  const float g = __bfloat162float(gate[gate_width == 1 ? row : i]);
  out[i] = __float2bfloat16(__bfloat162float(x[i]) * sigmoid(g));
}

}  // namespace

void launch_causal_conv1d(const LinearAttentionArgs& args, const void* x, const void* weight,
                          bool weight_f32, void* conv_states, void* out, int64_t channels,
                          int kernel, cudaStream_t stream) {
  if (args.n_seqs == 0 || args.max_q_len == 0) return;
  const auto c = static_cast<int>(channels);
  switch (kernel) {
    case 2:
      return launch_conv<2>(args, x, weight, weight_f32, conv_states, out, c, stream);
    case 3:
      return launch_conv<3>(args, x, weight, weight_f32, conv_states, out, c, stream);
    case 4:
      return launch_conv<4>(args, x, weight, weight_f32, conv_states, out, c, stream);
    case 5:
      return launch_conv<5>(args, x, weight, weight_f32, conv_states, out, c, stream);
    case 6:
      return launch_conv<6>(args, x, weight, weight_f32, conv_states, out, c, stream);
    default:
      break;  // the backend refuses other kernel sizes before launching
  }
}

void launch_gated_delta_rule(const LinearAttentionArgs& args, const DeltaRuleShape& shape,
                             const void* qkv, const void* ba, const void* a_log,
                             const void* dt_bias, bool a_log_f32, bool dt_bias_f32, float* states,
                             void* out, cudaStream_t stream) {
  if (args.n_seqs == 0 || args.max_q_len == 0) return;
  const DeltaArgs a{args,
                    shape,
                    static_cast<const bf16*>(qkv),
                    static_cast<const float*>(ba),
                    a_log,
                    dt_bias,
                    a_log_f32,
                    dt_bias_f32,
                    states,
                    static_cast<bf16*>(out)};
  const dim3 grid(ceil_div(shape.value_head_dim, kDeltaColumns), shape.n_value_heads, args.n_seqs);
  const auto launch = [&](auto kernel) {
    launch_pdl(kernel, grid, dim3(kDeltaThreads), 0, stream, a);
  };
  if (shape.key_head_dim <= 32) return launch(gated_delta_rule_kernel<32>);
  if (shape.key_head_dim <= 64) return launch(gated_delta_rule_kernel<64>);
  if (shape.key_head_dim <= 128) return launch(gated_delta_rule_kernel<128>);
  launch(gated_delta_rule_kernel<256>);  // the backend refuses larger heads before launching
}

void launch_rms_norm_gated(const void* x, const void* gate, const void* weight, bool weight_f32,
                           float eps, void* out, int64_t n_rows, int64_t width,
                           cudaStream_t stream) {
  if (n_rows == 0) return;
  constexpr int kRowsPerBlock = 8;
  launch_pdl(rms_norm_gated_kernel, dim3(ceil_div(n_rows, kRowsPerBlock)), dim3(32 * kRowsPerBlock),
             0, stream, static_cast<const bf16*>(x), static_cast<const bf16*>(gate), weight,
             weight_f32, eps, static_cast<bf16*>(out), n_rows, static_cast<int>(width));
}

void launch_sigmoid_mul(const void* x, const void* gate, void* out, int64_t n_rows, int64_t width,
                        int64_t gate_width, cudaStream_t stream) {
  const int64_t n = n_rows * width;
  if (n == 0) return;
  constexpr int kThreads = 256;
  launch_pdl(sigmoid_mul_kernel, dim3(ceil_div(n, kThreads)), dim3(kThreads), 0, stream,
             static_cast<const bf16*>(x), static_cast<const bf16*>(gate), static_cast<bf16*>(out),
             n, width, gate_width);
}

}  // namespace hadron::cuda
