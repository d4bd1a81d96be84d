// Gated DeltaNet (linear attention) ops: the causal convolution with its per-sequence state,
// the gated delta rule over a per-sequence recurrent state, the gated RMSNorm and the sigmoid
// gate. The rule runs token by token (the recurrent form): prefill and decode share one path.
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x * sigmoid(x); }
// torch.nn.functional.softplus (beta 1, threshold 20).
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// One sequence's share of a step: rows [begin, end), its state slot, and whether it starts
// from zero state (its first token this step is at position 0).
struct SeqRange {
  int64_t begin = 0, end = 0;
  int32_t slot = -1;
  bool fresh = false;
};

std::vector<SeqRange> sequence_ranges(const BatchMeta& meta, int64_t n_slots) {
  HADRON_CHECK(meta.state_slots.defined() && meta.state_slots.size(0) == meta.n_seqs,
               "linear attention needs a state slot per sequence (state_slots {})",
               meta.state_slots.describe());
  std::vector<SeqRange> ranges;
  const int32_t* cu = meta.cu_seqlens_q.ptr<int32_t>();
  for (int64_t s = 0; s < meta.n_seqs; ++s) {
    const int32_t slot = meta.state_slots.ptr<int32_t>()[s];
    if (slot < 0 || cu[s] == cu[s + 1]) continue;  // a padding row
    HADRON_CHECK(slot < n_slots, "state slot {} outside the {} slots", slot, n_slots);
    ranges.push_back({cu[s], cu[s + 1], slot, meta.positions.ptr<int32_t>()[cu[s]] == 0});
  }
  return ranges;
}

// x * rsqrt(sum(x^2) + 1e-6), as transformers' l2norm.
void l2_normalize(float* x, int64_t n, float scale) {
  double sum_squares = 0;
  for (int64_t i = 0; i < n; ++i) sum_squares += double{x[i]} * x[i];
  const float inv = scale / std::sqrt(static_cast<float>(sum_squares) + 1e-6f);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

// One value head of one sequence through the delta rule, a token at a time. state: [Dk, Dv].
struct DeltaHead {
  const LinearAttentionParams& p;
  float decay_rate;  // exp(a_log): g = -decay_rate * softplus(a + dt_bias)
  float dt_bias;
  std::vector<float> q, k, delta;  // scratch: [Dk], [Dk], [Dv]

  void run(const float* q_in, const float* k_in, const float* v, float b, float a, float* state,
           float* out) {
    const int64_t dk = p.key_head_dim, dv = p.value_head_dim;
    q.assign(q_in, q_in + dk);
    k.assign(k_in, k_in + dk);
    delta.resize(dv);
    l2_normalize(q.data(), dk, 1.0f / std::sqrt(static_cast<float>(dk)));
    l2_normalize(k.data(), dk, 1.0f);
    const float beta = sigmoid(b);
    const float decay = std::exp(-decay_rate * softplus(a + dt_bias));
    for (int64_t i = 0; i < dk * dv; ++i) state[i] *= decay;
    for (int64_t j = 0; j < dv; ++j) {
      float memory = 0;  // (S^T k)[j]
      for (int64_t i = 0; i < dk; ++i) memory += state[i * dv + j] * k[i];
      delta[j] = (v[j] - memory) * beta;
    }
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) state[i * dv + j] += k[i] * delta[j];
    for (int64_t j = 0; j < dv; ++j) {
      float acc = 0;
      for (int64_t i = 0; i < dk; ++i) acc += state[i * dv + j] * q[i];
      out[j] = acc;
    }
  }
};

}  // namespace

void CpuBackend::check_linear_attention(const LinearAttentionParams& params) const {
  HADRON_CHECK(params.n_key_heads > 0 && params.n_value_heads % params.n_key_heads == 0 &&
                   params.conv_kernel >= 1,
               "linear attention of {} key heads, {} value heads, kernel {}", params.n_key_heads,
               params.n_value_heads, params.conv_kernel);
}

void CpuBackend::causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_states,
                               const BatchMeta& meta, const Tensor& out) {
  const int64_t channels = x.size(1), kernel = weight.size(1), width = kernel - 1;
  HADRON_CHECK(x.dtype == DType::F32 && out.dtype == DType::F32 &&
                   conv_states.dtype == DType::F32 && weight.size(0) == channels &&
                   conv_states.size(1) == channels && conv_states.size(2) == width &&
                   out.numel() == x.numel(),
               "causal_conv1d {} with weight {} and state {} into {}", x.describe(),
               weight.describe(), conv_states.describe(), out.describe());
  std::vector<float> w(channels * kernel);
  load_row_f32(weight, 0, channels * kernel, w.data());
  for (const SeqRange& seq : sequence_ranges(meta, conv_states.size(0))) {
    float* state = conv_states.ptr<float>() + seq.slot * channels * width;
    const int64_t n = seq.end - seq.begin;
    std::vector<float> history(width + n);  // the last inputs of one channel, oldest first
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < width; ++i) history[i] = seq.fresh ? 0.0f : state[c * width + i];
      for (int64_t t = 0; t < n; ++t)
        history[width + t] = x.ptr<float>()[(seq.begin + t) * channels + c];
      for (int64_t t = 0; t < n; ++t) {
        float acc = 0;
        for (int64_t j = 0; j < kernel; ++j) acc += w[c * kernel + j] * history[t + j];
        out.ptr<float>()[(seq.begin + t) * channels + c] = silu(acc);
      }
      for (int64_t i = 0; i < width; ++i) state[c * width + i] = history[n + i];
    }
  }
}

void CpuBackend::gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log,
                                  const Tensor& dt_bias, const Tensor& states,
                                  const BatchMeta& meta, const LinearAttentionParams& params,
                                  const Tensor& out) {
  const int64_t hv = params.n_value_heads, dk = params.key_head_dim, dv = params.value_head_dim;
  const int64_t n_tokens = qkv.size(0), width = params.conv_dim();
  HADRON_CHECK(qkv.dtype == DType::F32 && ba.dtype == DType::F32 && states.dtype == DType::F32 &&
                   qkv.size(1) == width && ba.size(0) == n_tokens && ba.size(1) == 2 * hv &&
                   states.size(1) == hv && states.size(2) == dk && states.size(3) == dv &&
                   out.numel() == n_tokens * hv * dv && a_log.numel() == hv &&
                   dt_bias.numel() == hv,
               "gated_delta_rule {} {} with state {} into {}", qkv.describe(), ba.describe(),
               states.describe(), out.describe());
  const int64_t group = hv / params.n_key_heads;
  const std::vector<SeqRange> seqs = sequence_ranges(meta, states.size(0));
  const auto n_seqs = static_cast<int64_t>(seqs.size());
  ThreadPool::global().parallel_for(
      n_seqs * hv,
      [&](int64_t first, int64_t last) {
        for (int64_t job = first; job < last; ++job) {
          const SeqRange& seq = seqs[job / hv];
          const int64_t h = job % hv, kh = h / group;
          float* state = states.ptr<float>() + (seq.slot * hv + h) * dk * dv;
          if (seq.fresh) std::fill(state, state + dk * dv, 0.0f);
          DeltaHead head{params, std::exp(load_f32(a_log, h)), load_f32(dt_bias, h), {}, {}, {}};
          for (int64_t t = seq.begin; t < seq.end; ++t) {
            const float* row = qkv.ptr<float>() + t * width;
            const float* gates = ba.ptr<float>() + t * 2 * hv;
            head.run(row + kh * dk, row + params.key_dim() + kh * dk,
                     row + 2 * params.key_dim() + h * dv, gates[h], gates[hv + h], state,
                     out.ptr<float>() + (t * hv + h) * dv);
          }
        }
      },
      n_tokens * hv * dk * dv * 4);
}

void CpuBackend::rms_norm_gated(const Tensor& x, const Tensor& gate, const Tensor& weight,
                                float eps, const Tensor& out) {
  const int64_t width = weight.numel();
  HADRON_CHECK(x.dtype == DType::F32 && gate.dtype == DType::F32 && out.dtype == DType::F32 &&
                   x.numel() == gate.numel() && x.numel() == out.numel() && x.numel() % width == 0,
               "rms_norm_gated {} gate {} weight {} into {}", x.describe(), gate.describe(),
               weight.describe(), out.describe());
  std::vector<float> w(width);
  load_row_f32(weight, 0, width, w.data());
  for (int64_t r = 0; r < x.numel() / width; ++r) {
    float* dst = out.ptr<float>() + r * width;
    rms_normalize(x.ptr<float>() + r * width, w.data(), width, eps, dst);
    const float* g = gate.ptr<float>() + r * width;
    for (int64_t i = 0; i < width; ++i) dst[i] *= silu(g[i]);
  }
}

void CpuBackend::sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& out) {
  const int64_t rows = x.size(0), width = x.numel() / std::max<int64_t>(rows, 1);
  const int64_t gate_width = gate.numel() / std::max<int64_t>(rows, 1);
  HADRON_CHECK(x.dtype == DType::F32 && gate.dtype == DType::F32 && out.dtype == DType::F32 &&
                   gate.size(0) == rows && out.numel() == x.numel() &&
                   (gate_width == width || gate_width == 1),
               "sigmoid_mul {} by {} into {}", x.describe(), gate.describe(), out.describe());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i)
      out.ptr<float>()[r * width + i] =
          x.ptr<float>()[r * width + i] *
          sigmoid(gate.ptr<float>()[r * gate_width + (gate_width == 1 ? 0 : i)]);
}

}  // namespace hadron
