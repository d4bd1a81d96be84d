// Kernel micro-benchmark of the CUDA backend at Qwen3-8B shapes (hidden 4096, 32/8 heads of
// 128, intermediate 12288, vocab 151936, 36 layers): decode batch 1 and 128 (context 256),
// a 2048-token prefill, and decode attention at long contexts. Each kernel is timed with CUDA
// events per launch after warm-up (median of repeats), on inputs rotated so that the working
// set exceeds the 50 MB L2, and compared with the ceilings measured on an H100 (3.0 TB/s copy,
// 790 TFLOP/s bf16).
// The last table models one forward step as 36 x (sum of a layer's kernels) + LM head.
//
//   cuda_ops_bench [--attention | --decode-gemm] [--markdown FILE]
// --attention: decode attention rows only; --decode-gemm: the decode GEMM's k-split sweep only.
// % ceil: the larger of bytes / 3.0 TB/s and flops / 790 TFLOP/s over the measured time.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernels.h"
#include "core/dtype.h"
#include "median_timing.h"

namespace hadron::cuda {
namespace {

constexpr double kBandwidth = 3.0e12, kFlops = 790e12;
constexpr int64_t kHidden = 4096, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kInter = 12288,
                  kVocab = 151936, kLayers = 36, kBlockSize = 16;
constexpr size_t kRotateBytes = size_t{256} << 20;  // working set well above L2

// Device memory filled with random bf16 (a repeated 16 MB random pattern) or f32.
class Arena {
 public:
  ~Arena() {
    for (void* p : buffers_) cudaFree(p);
  }
  void* bf16(int64_t n) { return fill(n * 2, true); }
  void* f32(int64_t n) { return fill(n * 4, false); }
  void* i32(const std::vector<int32_t>& values) {
    void* p = alloc(values.size() * 4);
    CUDA_CHECK(cudaMemcpy(p, values.data(), values.size() * 4, cudaMemcpyHostToDevice));
    return p;
  }

 private:
  void* alloc(size_t bytes) {
    void* p;
    CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 16)));
    buffers_.push_back(p);
    return p;
  }
  void* fill(size_t bytes, bool bf16) {
    constexpr size_t kPattern = size_t{16} << 20;
    if (pattern_bf16_.empty()) {
      uint64_t state = 0x9e3779b97f4a7c15ull;
      auto next = [&] {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        return (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) * 0.2f;
      };
      pattern_bf16_.resize(kPattern / 2);
      pattern_f32_.resize(kPattern / 4);
      for (auto& v : pattern_bf16_) v = f32_to_bf16(next());
      for (auto& v : pattern_f32_) v = next() * 20;
    }
    void* p = alloc(bytes);
    const void* src = bf16 ? static_cast<const void*>(pattern_bf16_.data()) : pattern_f32_.data();
    for (size_t offset = 0; offset < bytes; offset += kPattern)
      CUDA_CHECK(cudaMemcpy(static_cast<char*>(p) + offset, src, std::min(kPattern, bytes - offset),
                            cudaMemcpyHostToDevice));
    return p;
  }
  std::vector<void*> buffers_;
  std::vector<uint16_t> pattern_bf16_;
  std::vector<float> pattern_f32_;
};

struct Row {
  std::string phase, op, shape, path;
  double us, bytes, flops;
  int per_layer;  // times per layer (0: once per step, -1: not in the modelled step)
};

class Bench {
 public:
  Bench() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaDeviceGetAttribute(&n_sms_, cudaDevAttrMultiProcessorCount, 0));
    gemm_ = std::make_unique<Gemm>(stream_);
  }
  void run_phase(const std::string& phase, int64_t m, int n_seqs, int q_len, int kv_len);
  // Decode attention over sequences of the given context lengths (blocks in order), caches
  // rotated so that the working set exceeds L2.
  void decode_attention(const std::string& phase, const std::vector<int>& kv_lens,
                        const std::string& shape, int per_layer);
  // A whole decode step (36 layers with their own weights and caches, final norm, LM head,
  // greedy sampling) captured into one CUDA graph; the median replay time in ms.
  double graph_decode_step_ms(int n_seqs, int kv_len);
  // The wgmma decode GEMM at Qwen3-8B's projection shapes for 4-64 rows, at every k split and
  // the one it picks, against cuBLASLt; also its host time a launch and its time replayed from
  // a graph (printed as it goes).
  void decode_gemm_sweep();
  void print(FILE* out, bool markdown) const;

 private:
  int copies_for(double bytes) const {
    return static_cast<int>(std::clamp<double>(kRotateBytes / std::max(bytes, 1.0), 1, 64));
  }
  Row& add(const std::string& phase, const std::string& op, const std::string& shape,
           const std::string& path, double bytes, double flops, int per_layer,
           const std::function<void(int)>& launch) {
    const double us = median_us(stream_, copies_for(bytes), launch);
    rows_.push_back({phase, op, shape, path, us, bytes, flops, per_layer});
    std::fprintf(stderr, "%-8s %-16s %-28s %-9s %9.1f us\n", phase.c_str(), op.c_str(),
                 shape.c_str(), path.c_str(), us);
    return rows_.back();
  }
  void linear(const std::string& phase, const std::string& op, int64_t m, int64_t n, int64_t k,
              bool out_f32, int per_layer);
  // Attention of n_seqs sequences of q_len queries each over kv_len keys in a paged cache,
  // sequence s in its own blocks s * ceil(kv_len / kBlockSize) onwards, in order.
  AttentionArgs paged_attention(int n_seqs, int q_len, int kv_len, const void* q,
                                const void* k_cache, const void* v_cache, void* out);
  // Attention at Qwen3-8B's heads over these query offsets, context lengths and block tables
  // (uploaded); q, the caches and out left null.
  AttentionArgs attention_args(const std::vector<int32_t>& cu, const std::vector<int32_t>& kv_lens,
                               const std::vector<int32_t>& tables, int max_q, int max_kv,
                               int max_blocks);

  cudaStream_t stream_;
  int n_sms_ = 0;
  std::unique_ptr<Gemm> gemm_;
  Arena arena_;
  std::vector<Row> rows_;
};

std::string dims(std::initializer_list<int64_t> values) {
  std::string text;
  for (int64_t v : values) {
    if (!text.empty()) text += 'x';
    text += std::to_string(v);
  }
  return text;
}

void Bench::linear(const std::string& phase, const std::string& op, int64_t m, int64_t n, int64_t k,
                   bool out_f32, int per_layer) {
  const double bytes = 2.0 * (n * k + m * k) + (out_f32 ? 4.0 : 2.0) * m * n;
  const double flops = 2.0 * m * n * k;
  const int copies = copies_for(bytes);
  std::vector<void*> x(copies), w(copies), out(copies);
  for (int c = 0; c < copies; ++c) {
    x[c] = arena_.bf16(m * k);
    w[c] = arena_.bf16(n * k);
    out[c] = out_f32 ? arena_.f32(m * n) : arena_.bf16(m * n);
  }
  const std::string shape = dims({m, n, k});
  add(phase, op, shape, "cublasLt", bytes, flops, per_layer,
      [&](int c) { gemm_->run(x[c], w[c], nullptr, out[c], out_f32, m, n, k); });
  if (m > kDecodeGemmMaxRows) return;
  // The backend times cuBLASLt against the GEMV (m <= kGemvMaxRows) or the wgmma decode GEMM
  // (above) and keeps the faster; so does the model.
  const double gemm_us = rows_.back().us;
  Row& own =
      m <= kGemvMaxRows
          ? add(phase, op, shape, "gemv", bytes, flops, per_layer,
                [&](int c) { launch_gemv(x[c], w[c], nullptr, out[c], out_f32, m, n, k, stream_); })
          : add(phase, op, shape, "decode_gemm", bytes, flops, per_layer, [&](int c) {
              launch_decode_gemm(x[c], w[c], nullptr, out[c], out_f32, m, n, k, 0, stream_);
            });
  (own.us < gemm_us ? rows_[rows_.size() - 2] : own).per_layer = -1;
}

void Bench::decode_gemm_sweep() {
  struct Shape {
    const char* op;
    int64_t n, k;
  };
  const Shape shapes[] = {{"qkv_proj", (kHeads + 2 * kKvHeads) * kHeadDim, kHidden},
                          {"o_proj", kHidden, kHeads * kHeadDim},
                          {"gate_up_proj", 2 * kInter, kHidden},
                          {"down_proj", kHidden, kInter}};
  for (const int64_t m : {4, 8, 16, 32, 48, 64}) {
    for (const Shape& s : shapes) {
      const double bytes = 2.0 * (s.n * s.k + m * s.k) + 2.0 * m * s.n;
      const int copies = copies_for(bytes);
      std::vector<void*> x(copies), w(copies), out(copies);
      for (int c = 0; c < copies; ++c) {
        x[c] = arena_.bf16(m * s.k);
        w[c] = arena_.bf16(s.n * s.k);
        out[c] = arena_.bf16(m * s.n);
      }
      const auto pct = [&](double us) { return 100.0 * bytes / kBandwidth / (us * 1e-6); };
      const double lt = median_us(stream_, copies, [&](int c) {
        gemm_->run(x[c], w[c], nullptr, out[c], false, m, s.n, s.k);
      });
      std::printf("sweep m=%-3lld %-13s cublasLt %6.1f us (%3.0f%%) | decode_gemm splits",
                  static_cast<long long>(m), s.op, lt, pct(lt));
      for (const int splits : {0, 1, 2, 3, 4, 6, 8}) {
        const double us = median_us(stream_, copies, [&](int c) {
          launch_decode_gemm(x[c], w[c], nullptr, out[c], false, m, s.n, s.k, splits, stream_);
        });
        std::printf(" %s:%6.1f (%3.0f%%)", splits == 0 ? "auto" : std::to_string(splits).c_str(),
                    us, pct(us));
      }
      // Host cost of a launch, and device time from a graph of 10 launches.
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 100; ++i)
        launch_decode_gemm(x[i % copies], w[i % copies], nullptr, out[i % copies], false, m, s.n,
                           s.k, 0, stream_);
      const double host_us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          100;
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < 10; ++i)
        launch_decode_gemm(x[i % copies], w[i % copies], nullptr, out[i % copies], false, m, s.n,
                           s.k, 0, stream_);
      CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
      CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      const double graph_us =
          median_us(stream_, 1, [&](int) { CUDA_CHECK(cudaGraphLaunch(exec, stream_)); }) / 10;
      CUDA_CHECK(cudaGraphExecDestroy(exec));
      CUDA_CHECK(cudaGraphDestroy(graph));
      std::printf(" | host %.1f us, graph %.1f us (%3.0f%%)\n", host_us, graph_us, pct(graph_us));
      std::fflush(stdout);
    }
  }
}

AttentionArgs Bench::paged_attention(int n_seqs, int q_len, int kv_len, const void* q,
                                     const void* k_cache, const void* v_cache, void* out) {
  const int blocks_per_seq = (kv_len + kBlockSize - 1) / kBlockSize;
  std::vector<int32_t> tables(int64_t{n_seqs} * blocks_per_seq), cu(n_seqs + 1), kv(n_seqs, kv_len);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i);
  for (int s = 0; s <= n_seqs; ++s) cu[s] = s * q_len;
  AttentionArgs args = attention_args(cu, kv, tables, q_len, kv_len, blocks_per_seq);
  args.q = q;
  args.k_cache = k_cache;
  args.v_cache = v_cache;
  args.out = out;
  return args;
}

AttentionArgs Bench::attention_args(const std::vector<int32_t>& cu,
                                    const std::vector<int32_t>& kv_lens,
                                    const std::vector<int32_t>& tables, int max_q, int max_kv,
                                    int max_blocks) {
  return {nullptr,
          nullptr,
          nullptr,
          nullptr,
          static_cast<int32_t*>(arena_.i32(cu)),
          static_cast<int32_t*>(arena_.i32(kv_lens)),
          static_cast<int32_t*>(arena_.i32(tables)),
          static_cast<int>(kv_lens.size()),
          cu.back(),
          max_q,
          max_kv,
          kBlockSize,
          max_blocks,
          kHeads,
          kKvHeads,
          kHeadDim,
          0.0883883f,
          0,
          nullptr};
}

void Bench::run_phase(const std::string& phase, int64_t m, int n_seqs, int q_len, int kv_len) {
  const int64_t qkv_width = (kHeads + 2 * kKvHeads) * kHeadDim;
  // Norms, embedding, elementwise.
  {
    const int copies = copies_for(6.0 * m * kHidden);
    std::vector<void*> x(copies), res(copies), out(copies);
    for (int c = 0; c < copies; ++c) {
      x[c] = arena_.bf16(m * kHidden);
      res[c] = arena_.bf16(m * kHidden);
      out[c] = arena_.bf16(m * kHidden);
    }
    void* weight = arena_.bf16(kHidden);
    add(phase, "add_rms_norm", dims({m, kHidden}), "", 8.0 * m * kHidden, 0, 2, [&](int c) {
      launch_rms_norm(x[c], res[c], res[c], weight, out[c], m, kHidden, 1e-6f, stream_);
    });
  }
  linear(phase, "qkv_proj", m, qkv_width, kHidden, false, 1);
  {
    const int n_blocks = n_seqs * ((kv_len + kBlockSize - 1) / kBlockSize);
    std::vector<int32_t> slots(m), positions(m);
    for (int64_t t = 0; t < m; ++t) {
      slots[t] = static_cast<int32_t>(t % (int64_t{n_blocks} * kBlockSize));
      positions[t] = static_cast<int32_t>(t % kv_len);
    }
    void* qkv = arena_.bf16(m * qkv_width);
    void* q_out = arena_.bf16(m * kHeads * kHeadDim);
    void* k_cache = arena_.bf16(int64_t{n_blocks} * kBlockSize * kKvHeads * kHeadDim);
    void* v_cache = arena_.bf16(int64_t{n_blocks} * kBlockSize * kKvHeads * kHeadDim);
    void* norm = arena_.bf16(kHeadDim);
    auto* cos_sin = static_cast<const float*>(arena_.f32(4096 * kHeadDim));
    auto* slot_ptr = static_cast<int32_t*>(arena_.i32(slots));
    auto* pos_ptr = static_cast<int32_t*>(arena_.i32(positions));
    add(phase, "qkv_rope_store", dims({m, qkv_width}), "", 4.0 * m * qkv_width, 0, 1, [&](int) {
      launch_qkv_rope_store({qkv, norm, norm, pos_ptr, cos_sin, slot_ptr, k_cache, v_cache, q_out,
                             m, kHeads, kKvHeads, kHeadDim, kHeadDim, 1e-6f, true},
                            stream_);
    });
    // Attention over a paged cache of n_seqs sequences of kv_len tokens, blocks in order.
    void* attn_out = arena_.bf16(m * kHeads * kHeadDim);
    const AttentionArgs args =
        paged_attention(n_seqs, q_len, kv_len, q_out, k_cache, v_cache, attn_out);
    const double kv_bytes = 2.0 * 2 * n_seqs * kv_len * kKvHeads * kHeadDim;
    const double causal_pairs = n_seqs * (double(q_len) * kv_len - double(q_len) * (q_len - 1) / 2);
    const double attn_flops = 4.0 * causal_pairs * kHeads * kHeadDim;
    if (q_len == 1) {
      decode_attention(phase, std::vector<int>(n_seqs, kv_len), dims({n_seqs, kv_len}), 1);
    } else {
      add(phase, "attention", "prefill " + dims({n_seqs, q_len}), "fa2-mma", kv_bytes, attn_flops,
          1, [&](int) { launch_attention_prefill(args, stream_); });
    }
  }
  linear(phase, "o_proj", m, kHidden, kHeads * kHeadDim, false, 1);
  linear(phase, "gate_up_proj", m, 2 * kInter, kHidden, false, 1);
  {
    const int copies = copies_for(6.0 * m * kInter);
    std::vector<void*> in(copies), out(copies);
    for (int c = 0; c < copies; ++c) {
      in[c] = arena_.bf16(2 * m * kInter);
      out[c] = arena_.bf16(m * kInter);
    }
    add(phase, "silu_mul", dims({m, kInter}), "", 6.0 * m * kInter, 0, 1,
        [&](int c) { launch_silu_mul(in[c], out[c], m, kInter, stream_); });
  }
  linear(phase, "down_proj", m, kHidden, kInter, false, 1);
  // Once per step: the LM head over the rows that produce logits, then sampling.
  const int64_t rows = n_seqs;
  linear(phase, "lm_head", rows, kVocab, kHidden, true, 0);
  {
    float* logits = static_cast<float*>(arena_.f32(rows * kVocab));
    std::vector<int32_t> zeros(rows, 0);
    std::vector<float> temps(rows, 0.0f), ones(rows, 1.0f), nothing(rows, 0.0f);
    auto upload_f32 = [&](const std::vector<float>& v) {
      void* p = arena_.f32(rows);
      CUDA_CHECK(cudaMemcpy(p, v.data(), rows * 4, cudaMemcpyHostToDevice));
      return static_cast<float*>(p);
    };
    std::vector<int32_t> seeds_words(2 * rows, 7);
    auto* seeds = static_cast<uint64_t*>(arena_.i32(seeds_words));
    auto* tokens = static_cast<int32_t*>(arena_.i32(zeros));
    SampleArgs greedy{logits,
                      upload_f32(temps),
                      static_cast<int32_t*>(arena_.i32(zeros)),
                      upload_f32(ones),
                      upload_f32(nothing),
                      seeds,
                      seeds,
                      tokens,
                      rows,
                      kVocab};
    add(phase, "sample greedy", dims({rows, kVocab}), "", 4.0 * rows * kVocab, 0, 0,
        [&](int) { launch_sample(greedy, stream_); });
    SampleArgs top_p = greedy;
    top_p.temperature = upload_f32(ones);
    top_p.top_p = upload_f32(std::vector<float>(rows, 0.9f));
    top_p.top_k = static_cast<int32_t*>(arena_.i32(std::vector<int32_t>(rows, 50)));
    add(phase, "sample k50 p0.9", dims({rows, kVocab}), "", 4.0 * rows * kVocab, 0, -1,
        [&](int) { launch_sample(top_p, stream_); });
  }
}

void Bench::decode_attention(const std::string& phase, const std::vector<int>& kv_lens,
                             const std::string& shape, int per_layer) {
  const int n_seqs = static_cast<int>(kv_lens.size());
  std::vector<int32_t> cu(n_seqs + 1), tables;
  int max_kv = 0, max_blocks = 0;
  for (int kv_len : kv_lens) {
    max_kv = std::max(max_kv, kv_len);
    max_blocks = std::max<int>(max_blocks, (kv_len + kBlockSize - 1) / kBlockSize);
  }
  int n_blocks = 0;
  tables.assign(int64_t{n_seqs} * max_blocks, 0);
  for (int s = 0; s < n_seqs; ++s) {
    cu[s + 1] = s + 1;
    for (int b = 0; b < (kv_lens[s] + kBlockSize - 1) / kBlockSize; ++b)
      tables[int64_t{s} * max_blocks + b] = n_blocks++;
  }
  double keys = 0;
  for (int kv_len : kv_lens) keys += kv_len;
  const double kv_bytes = 2.0 * 2 * keys * kKvHeads * kHeadDim;
  const int64_t cache_elems = int64_t{n_blocks} * kBlockSize * kKvHeads * kHeadDim;
  const AttentionArgs base = attention_args(
      cu, std::vector<int32_t>(kv_lens.begin(), kv_lens.end()), tables, 1, max_kv, max_blocks);
  const int copies = copies_for(kv_bytes);
  std::vector<AttentionArgs> args(copies, base);
  for (AttentionArgs& a : args) {
    a.q = arena_.bf16(int64_t{n_seqs} * kHeads * kHeadDim);
    a.out = arena_.bf16(int64_t{n_seqs} * kHeads * kHeadDim);
    a.k_cache = arena_.bf16(cache_elems);
    a.v_cache = arena_.bf16(cache_elems);
  }
  auto* workspace =
      static_cast<float*>(arena_.f32(std::max<size_t>(1, decode_workspace_floats(base, n_sms_))));
  add(phase, "attention", "decode " + shape, "split-kv", kv_bytes, 4.0 * keys * kHeads * kHeadDim,
      per_layer, [&](int c) { launch_attention_decode(args[c], workspace, n_sms_, stream_); });
}

double Bench::graph_decode_step_ms(int n_seqs, int kv_len) {
  const int64_t m = n_seqs, qkv_width = (kHeads + 2 * kKvHeads) * kHeadDim;
  const int blocks_per_seq = (kv_len + kBlockSize - 1) / kBlockSize;
  const int64_t cache_elems = int64_t{n_seqs} * blocks_per_seq * kBlockSize * kKvHeads * kHeadDim;
  struct Layer {
    void *qkv, *o, *gate_up, *down, *norm1, *norm2, *q_norm, *k_norm, *k_cache, *v_cache;
  };
  std::vector<Layer> layers(kLayers);
  for (Layer& l : layers)
    l = {arena_.bf16(qkv_width * kHidden),
         arena_.bf16(kHidden * kHeads * kHeadDim),
         arena_.bf16(2 * kInter * kHidden),
         arena_.bf16(kHidden * kInter),
         arena_.bf16(kHidden),
         arena_.bf16(kHidden),
         arena_.bf16(kHeadDim),
         arena_.bf16(kHeadDim),
         arena_.bf16(cache_elems),
         arena_.bf16(cache_elems)};
  void* final_norm = arena_.bf16(kHidden);
  void* lm_head = arena_.bf16(kVocab * kHidden);
  void *x = arena_.bf16(m * kHidden), *residual = arena_.bf16(m * kHidden),
       *normed = arena_.bf16(m * kHidden), *qkv = arena_.bf16(m * qkv_width),
       *q = arena_.bf16(m * kHeads * kHeadDim), *attn = arena_.bf16(m * kHeads * kHeadDim),
       *gate_up = arena_.bf16(m * 2 * kInter), *act = arena_.bf16(m * kInter);
  auto* logits = static_cast<float*>(arena_.f32(m * kVocab));
  std::vector<int32_t> slots(n_seqs), positions(n_seqs, kv_len - 1), zeros(n_seqs, 0);
  for (int s = 0; s < n_seqs; ++s) slots[s] = (s * blocks_per_seq) * kBlockSize + kv_len - 1;
  auto* cos_sin = static_cast<const float*>(arena_.f32(4096 * kHeadDim));
  auto* slot_ptr = static_cast<int32_t*>(arena_.i32(slots));
  auto* pos_ptr = static_cast<int32_t*>(arena_.i32(positions));
  const AttentionArgs args = paged_attention(n_seqs, 1, kv_len, q, nullptr, nullptr, attn);
  auto* workspace = static_cast<float*>(arena_.f32(decode_workspace_max_floats(n_sms_)));
  std::vector<float> zero_f(n_seqs, 0.0f), one_f(n_seqs, 1.0f);
  auto upload_f32 = [&](const std::vector<float>& v) {
    void* p = arena_.f32(n_seqs);
    CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
    return static_cast<float*>(p);
  };
  std::vector<int32_t> seed_words(2 * n_seqs, 3);
  auto* seeds = static_cast<uint64_t*>(arena_.i32(seed_words));
  SampleArgs greedy{logits,
                    upload_f32(zero_f),
                    static_cast<int32_t*>(arena_.i32(zeros)),
                    upload_f32(one_f),
                    upload_f32(zero_f),
                    seeds,
                    seeds,
                    static_cast<int32_t*>(arena_.i32(zeros)),
                    m,
                    kVocab};
  auto step = [&] {
    for (const Layer& l : layers) {
      launch_rms_norm(x, residual, residual, l.norm1, normed, m, kHidden, 1e-6f, stream_);
      gemm_->run(normed, l.qkv, nullptr, qkv, false, m, qkv_width, kHidden);
      launch_qkv_rope_store({qkv, l.q_norm, l.k_norm, pos_ptr, cos_sin, slot_ptr, l.k_cache,
                             l.v_cache, q, m, kHeads, kKvHeads, kHeadDim, kHeadDim, 1e-6f, true},
                            stream_);
      AttentionArgs layer_args = args;
      layer_args.k_cache = l.k_cache;
      layer_args.v_cache = l.v_cache;
      launch_attention_decode(layer_args, workspace, n_sms_, stream_);
      gemm_->run(attn, l.o, nullptr, x, false, m, kHidden, kHeads * kHeadDim);
      launch_rms_norm(x, residual, residual, l.norm2, normed, m, kHidden, 1e-6f, stream_);
      gemm_->run(normed, l.gate_up, nullptr, gate_up, false, m, 2 * kInter, kHidden);
      launch_silu_mul(gate_up, act, m, kInter, stream_);
      gemm_->run(act, l.down, nullptr, x, false, m, kHidden, kInter);
    }
    launch_rms_norm(x, residual, residual, final_norm, normed, m, kHidden, 1e-6f, stream_);
    gemm_->run(normed, lm_head, nullptr, logits, true, m, kVocab, kHidden);
    launch_sample(greedy, stream_);
  };
  step();  // plans and algorithm choices outside the capture
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  step();
  CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const double us = median_us(stream_, 1, [&](int) { CUDA_CHECK(cudaGraphLaunch(exec, stream_)); });
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return us / 1000.0;
}

void Bench::print(FILE* out, bool markdown) const {
  const char* sep = markdown ? " | " : "  ";
  auto line = [&](const std::string& text) { std::fprintf(out, "%s\n", text.c_str()); };
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s%-8s%s%-16s%s%-24s%s%-9s%s%9s%s%8s%s%8s%s%7s%s",
                markdown ? "| " : "", "phase", sep, "op", sep, "M x N x K / shape", sep, "path",
                sep, "us", sep, "TB/s", sep, "TFLOP/s", sep, "% ceil", markdown ? " |" : "");
  line(buf);
  if (markdown) line("|---|---|---|---|---:|---:|---:|---:|");
  for (const Row& r : rows_) {
    const double tbs = r.bytes / (r.us * 1e-6) / 1e12, tflops = r.flops / (r.us * 1e-6) / 1e12;
    // Ceiling: whichever of bytes / bandwidth and flops / peak is larger.
    const double floor_us = std::max(r.bytes / kBandwidth, r.flops / kFlops) * 1e6;
    std::snprintf(buf, sizeof buf, "%s%-8s%s%-16s%s%-24s%s%-9s%s%9.1f%s%8.2f%s%8.1f%s%6.0f%%%s",
                  markdown ? "| " : "", r.phase.c_str(), sep, r.op.c_str(), sep, r.shape.c_str(),
                  sep, (r.path + (r.per_layer < 0 ? "*" : "")).c_str(), sep, r.us, sep, tbs, sep,
                  tflops, sep, 100.0 * floor_us / r.us, markdown ? " |" : "");
    line(buf);
  }
  // Modelled step: the kernels the backend would run (paths marked * are not in it).
  line("");
  line("* not in the modelled step (the slower GEMM path, or a sampling variant)");
  line("");
  std::snprintf(buf, sizeof buf, "%s%-8s%s%12s%s%12s%s%14s%s", markdown ? "| " : "", "phase", sep,
                "layer us", sep, "step ms", sep, "model tok/s", markdown ? " |" : "");
  line(buf);
  if (markdown) line("|---|---:|---:|---:|");
  std::vector<std::string> phases;
  for (const Row& r : rows_)
    if (std::find(phases.begin(), phases.end(), r.phase) == phases.end()) phases.push_back(r.phase);
  for (const std::string& phase : phases) {
    double layer_us = 0, once_us = 0;
    int64_t tokens = 1;
    for (const Row& r : rows_) {
      if (r.phase != phase) continue;
      if (r.per_layer > 0) layer_us += r.per_layer * r.us;
      if (r.per_layer == 0) once_us += r.us;
      if (r.op == "qkv_rope_store") tokens = std::stoll(r.shape.substr(0, r.shape.find('x')));
    }
    if (layer_us == 0 && once_us == 0) continue;  // nothing of it in the modelled step
    const double step_ms = (kLayers * layer_us + once_us) / 1000.0;
    std::snprintf(buf, sizeof buf, "%s%-8s%s%12.1f%s%12.3f%s%14.0f%s", markdown ? "| " : "",
                  phase.c_str(), sep, layer_us, sep, step_ms, sep, tokens / (step_ms / 1000.0),
                  markdown ? " |" : "");
    line(buf);
  }
}

}  // namespace
}  // namespace hadron::cuda

int main(int argc, char** argv) {
  const char* markdown_path = nullptr;
  bool attention_only = false, decode_gemm_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--markdown") == 0 && i + 1 < argc) {
      markdown_path = argv[++i];
    } else if (std::strcmp(argv[i], "--attention") == 0) {
      attention_only = true;
    } else if (std::strcmp(argv[i], "--decode-gemm") == 0) {
      decode_gemm_only = true;
    } else {
      std::fprintf(stderr,
                   "usage: cuda_ops_bench [--attention | --decode-gemm] [--markdown FILE]\n");
      return 2;
    }
  }
  try {
    cudaDeviceProp props;
    CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
    std::printf("device: %s, %d SMs, L2 %d MB\n", props.name, props.multiProcessorCount,
                props.l2CacheSize >> 20);
    hadron::cuda::Bench bench;
    if (decode_gemm_only) {
      bench.decode_gemm_sweep();
      return 0;
    }
    if (attention_only) {
      bench.decode_attention("decode1", {256}, "1x256", -1);
      bench.decode_attention("decode128", std::vector<int>(128, 256), "128x256", -1);
    } else {
      bench.run_phase("decode1", 1, 1, 1, 256);
      bench.run_phase("decode128", 128, 128, 1, 256);
      bench.run_phase("prefill", 2048, 1, 2048, 2048);
    }
    // Long contexts: batch 1, and 256 sequences as in the 1000-in / 1000-out throughput run
    // (contexts 1000-2000 in its steady state).
    bench.decode_attention("long", {4096}, "1x4096", -1);
    bench.decode_attention("long", {32768}, "1x32768", -1);
    bench.decode_attention("long", std::vector<int>(128, 1500), "128x1500", -1);
    bench.decode_attention("long", std::vector<int>(256, 1500), "256x1500", -1);
    std::vector<int> ragged(256);
    for (int s = 0; s < 256; ++s) ragged[s] = 1000 + (s * 7919) % 1001;
    bench.decode_attention("long", ragged, "256x1000-2000", -1);
    // Whole decode steps in one graph each (all 36 layers' weights resident, 15 GB).
    char graph_lines[512] = "";
    int used = 0;
    for (const int n_seqs : {1, 128}) {
      if (attention_only) continue;
      const double ms = bench.graph_decode_step_ms(n_seqs, 256);
      used += std::snprintf(graph_lines + used, sizeof graph_lines - used,
                            "graph decode step, batch %d, context 256: %.3f ms = %.0f tok/s\n",
                            n_seqs, ms, n_seqs / (ms / 1000.0));
    }
    if (markdown_path != nullptr) {
      FILE* file = std::fopen(markdown_path, "w");
      if (file == nullptr) return 1;
      bench.print(file, true);
      std::fprintf(file, "\n%s", graph_lines);
      std::fclose(file);
    }
    bench.print(stdout, false);
    std::printf("\n%s", graph_lines);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_ops_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
