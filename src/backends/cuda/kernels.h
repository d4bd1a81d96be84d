// Launchers of the CUDA kernels, one per .cu file. They take raw device pointers and sizes
// that cuda_backend.cpp has already validated (host code formats the errors; nvcc cannot
// compile fmt's compile-time format strings), dispatch runtime sizes to template
// parameters, launch on `stream` and check the launch.
// Element types: bf16 for activations, weights and the KV cache unless a name says f32.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace hadron::cuda {

// out[t, :] = table[ids[t], :]; table: [vocab, hidden]. Ids outside the vocab give zero rows
// (the runner validates token ids on the host).
void launch_embedding(const int32_t* ids, const void* table, void* out, int64_t n_tokens,
                      int64_t hidden, int64_t vocab, cudaStream_t stream);

// residual_out = residual + x when residual is not null (residual_out may be residual), then
// out = rms_norm(residual_out or x) * weight, per row of `width` (a multiple of 8).
// x, residual, residual_out, out: [n_rows, width]; weight: [width].
void launch_rms_norm(const void* x, const void* residual, void* residual_out, const void* weight,
                     void* out, int64_t n_rows, int64_t width, float eps, cudaStream_t stream);

// In-place RoPE on the first rotary_dim dims of each head. x: [n_tokens, n_heads, head_dim];
// cos_sin: f32 [max_pos, rotary_dim] (cosines, then sines).
void launch_rope(void* x, const int32_t* positions, const float* cos_sin, int64_t n_tokens,
                 int64_t n_heads, int64_t head_dim, int64_t rotary_dim, bool neox,
                 cudaStream_t stream);

// k_cache[slot_mapping[t]] = k[t] (and v). token_elems = n_kv_heads * head_dim (multiple of 8).
void launch_store_kv(const void* k, const void* v, void* k_cache, void* v_cache,
                     const int32_t* slot_mapping, int64_t n_tokens, int64_t token_elems,
                     cudaStream_t stream);

struct QkvRopeStoreArgs {
  const void* qkv;     // [n_tokens, (n_heads + 2 n_kv_heads) * head_dim]
  const void* q_norm;  // [head_dim] or null
  const void* k_norm;  // [head_dim] or null
  const int32_t* positions;
  const float* cos_sin;  // [max_pos, rotary_dim]
  const int32_t* slot_mapping;
  void* k_cache;  // [n_blocks, block_size, n_kv_heads, head_dim]
  void* v_cache;
  void* q_out;  // [n_tokens, n_heads, head_dim]
  int64_t n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim;
  float eps;
  bool neox;
};
void launch_qkv_rope_store(const QkvRopeStoreArgs& args, cudaStream_t stream);

// out = silu(gate) * up; gate_up: [n_tokens, 2 inter]; inter a multiple of 8.
void launch_silu_mul(const void* gate_up, void* out, int64_t n_tokens, int64_t inter,
                     cudaStream_t stream);

// out[r] = x[rows[r]] for rows of row_bytes bytes.
void launch_gather_rows(const void* x, const int32_t* rows, void* out, int64_t n_rows,
                        int64_t row_bytes, cudaStream_t stream);

// out[m, n] = x[m, k] @ w[n, k]^T (+ bias[n], in out's dtype) for m <= 64 on wgmma tensor
// cores, weights streamed by TMA (decode_gemm.cu). k % 8 == 0, n % 8 == 0, 16-byte aligned
// x and w. splits: the k split (1-8 CTAs of a cluster a tile of 128 weight rows); 0 picks it
// from the shape. The engine takes it for kDecodeGemmMinRows to kDecodeGemmMaxRows rows
// (linear.cpp); fewer rows go to the GEMV where it beats cuBLASLt, more to cuBLASLt.
inline constexpr int64_t kDecodeGemmMinRows = 3;
inline constexpr int64_t kDecodeGemmMaxRows = 64;
void launch_decode_gemm(const void* x, const void* w, const void* bias, void* out, bool out_f32,
                        int64_t m, int64_t n, int64_t k, int splits, cudaStream_t stream);
// launch_decode_gemm (bf16, as the qkv tensor) of x and the merged q/k/v weight w
// [(n_heads + 2 n_kv_heads) * 128, k], handed straight to launch_qkv_rope_store's arithmetic:
// rope.qkv is unused, head_dim must be 128 (one head a weight tile), m = rope.n_tokens.
void launch_decode_gemm_qkv_rope(const void* x, const void* w, const void* bias,
                                 const QkvRopeStoreArgs& rope, int64_t k, int splits,
                                 cudaStream_t stream);
// activated[m, inter] = silu(gate) * up of the product of x and the fused weight w
// [2 inter, k] ([gate | up]), as launch_decode_gemm into a bf16 gate_up then launch_silu_mul
// (bit for bit); inter % 4 == 0, activated 8-byte aligned.
void launch_decode_gemm_silu(const void* x, const void* w, void* activated, int64_t m,
                             int64_t inter, int64_t k, int splits, cudaStream_t stream);

// Reads `bytes` of buf (contents unused; 16-byte aligned) through L2 and discards them, evicting
// what L2 held. May write one word of buf.
void launch_l2_flush(void* buf, size_t bytes, int n_sms, cudaStream_t stream);

// StepStaging's pointers (step_io.cu): the two host images (header_bytes, then the payload),
// the two host token buffers and the device counter {turns begun, scratch}.
struct StepIo {
  const void* images[2];
  int32_t* tokens[2];
  int32_t* counter;
  int64_t header_bytes;
};

// Backend::begin_step: the image of turn counter[0] (its header must name it, else the kernel
// traps) into inputs (n_bytes, a multiple of 8), its first n_ids int32 words resolved as
// token ids from sampled; then counter[0] += 1.
void launch_begin_step(const StepIo& io, void* inputs, int64_t n_bytes, int64_t n_ids,
                       const int32_t* sampled, int64_t n_sampled, cudaStream_t stream);
// Backend::end_step: sampled[0..n) into the tokens of turn counter[0] - 1.
void launch_end_step(const StepIo& io, const int32_t* sampled, int64_t n, cudaStream_t stream);

// The attention kernels (qkv_rope_store, prefill, decode) run head_dim 32..256 in steps of 16,
// each in the instance of the tile width above it (64, 128 or 256): the dims past head_dim are
// zero-filled on load and never written. Throws for any other head_dim.
int attention_tile_dim(int64_t head_dim);
// The most query heads a KV head may serve (the decode kernel's m16 tile holds one group).
constexpr int kMaxAttentionGroup = 8;

struct AttentionArgs {
  const void* q;        // [n_tokens, n_heads, head_dim]
  const void* k_cache;  // [n_blocks, block_size, n_kv_heads, head_dim]
  const void* v_cache;
  void* out;                    // [n_tokens, n_heads, head_dim]
  const int32_t* cu_seqlens_q;  // [n_seqs + 1]
  const int32_t* seq_lens_kv;   // [n_seqs]
  const int32_t* block_tables;  // [n_seqs, max_blocks_per_seq]
  int n_seqs, n_tokens, max_q_len, max_kv_len;
  int block_size, max_blocks_per_seq;
  int n_heads, n_kv_heads, head_dim;
  float scale;
  int sliding_window;  // 0: full causal
  // [n_heads] bf16 or null: a learned logit per head that joins the softmax denominator
  // once (no value row), as gpt-oss's "sinks".
  const void* sinks;
  // A batch mixing sequences of q_len 1 and longer ones: the decode kernel takes those of
  // q_len 1 and the prefill kernel the rest, each skipping the other's.
  bool split_by_q_len = false;
};

// Multi-head latent attention (Backend::mla_rope_store / mla_attention), bf16 throughout.
constexpr int kMlaMaxLatent = 512;  // latent_dim limit of the attention kernel's registers
struct MlaArgs {
  void* q;                      // [n_tokens, n_heads, nope_dim + rope_dim]; roped in place
  const void* kv;               // [n_tokens, latent_dim + rope_dim] (rope_store)
  const void* kv_norm;          // [latent_dim] (rope_store)
  const int32_t* positions;     // [n_tokens]
  const float* cos_sin;         // [max_pos, rope_dim]
  const int32_t* slot_mapping;  // [n_tokens] (rope_store)
  void* latent_cache;           // [n_blocks, block_size, 1, latent_dim + rope_dim]
  const void* kv_b;             // [n_heads * (nope_dim + v_dim), latent_dim] (attention)
  void* out;                    // [n_tokens, n_heads, v_dim] (attention)
  const int32_t* cu_seqlens_q;  // [n_seqs + 1] (attention)
  const int32_t* seq_lens_kv;   // [n_seqs]
  const int32_t* block_tables;  // [n_seqs, max_blocks_per_seq]
  int n_tokens, n_seqs, n_heads, nope_dim, rope_dim, latent_dim, v_dim;
  int block_size, max_blocks_per_seq;
  float norm_eps, scale;
  bool neox;
};
void launch_mla_rope_store(const MlaArgs& args, cudaStream_t stream);
void launch_mla_attention(const MlaArgs& args, cudaStream_t stream);

// Gated DeltaNet (Backend::causal_conv1d / gated_delta_rule / rms_norm_gated / sigmoid_mul).
// Sequence s's rows are [cu_seqlens_q[s], cu_seqlens_q[s + 1]); its state slot state_slots[s]
// (negative: a padding row, skipped); it starts from zero state when positions of its first row
// is 0. Parameters (conv weight, a_log, dt_bias, norm weight) are bf16 or f32 (`*_f32`).
struct LinearAttentionArgs {
  const int32_t* cu_seqlens_q;  // [n_seqs + 1]
  const int32_t* positions;     // [n_tokens]
  const int32_t* state_slots;   // [n_seqs]
  int n_seqs;
  int max_q_len;  // rows of the longest sequence this step
};
inline constexpr int kConvMaxKernel = 6;
inline constexpr int kDeltaMaxKeyDim = 256;
// out [T, C] = silu(causal depthwise conv of x [T, C] with weight [C, K]); conv_states [n_slots,
// C, K - 1] bf16, the last K - 1 inputs of each sequence, read and then updated.
void launch_causal_conv1d(const LinearAttentionArgs& args, const void* x, const void* weight,
                          bool weight_f32, void* conv_states, void* out, int64_t channels,
                          int kernel, cudaStream_t stream);
// The delta rule, recurrent form with each sequence's state held in registers across its rows.
// qkv: [T, 2 Hk Dk + Hv Dv] ([q | k | v]); ba: f32 [T, 2 Hv]; a_log, dt_bias: [Hv];
// states: f32 [n_slots, Hv, Dk, Dv]; out: [T, Hv, Dv]. Dk <= kDeltaMaxKeyDim.
struct DeltaRuleShape {
  int n_key_heads, n_value_heads, key_head_dim, value_head_dim;
};
void launch_gated_delta_rule(const LinearAttentionArgs& args, const DeltaRuleShape& shape,
                             const void* qkv, const void* ba, const void* a_log,
                             const void* dt_bias, bool a_log_f32, bool dt_bias_f32, float* states,
                             void* out, cudaStream_t stream);
// out = rms_norm(x) * weight * silu(gate) per row of `width`.
void launch_rms_norm_gated(const void* x, const void* gate, const void* weight, bool weight_f32,
                           float eps, void* out, int64_t n_rows, int64_t width,
                           cudaStream_t stream);
// out [rows, width] = x * sigmoid(gate); gate [rows, width] or [rows, 1] (gate_width 1).
void launch_sigmoid_mul(const void* x, const void* gate, void* out, int64_t n_rows, int64_t width,
                        int64_t gate_width, cudaStream_t stream);

// FlashAttention-2-style tiled causal GQA attention for any q_len (prefill, chunked
// prefill, mixed batches).
void launch_attention_prefill(const AttentionArgs& args, cudaStream_t stream);

// Split-KV flash-decoding for decode-only batches (q_len 1 for every sequence), or for the
// q_len-1 sequences of a batch with split_by_q_len.
// workspace: f32 of decode_workspace_floats(args) elements, at most
// decode_workspace_max_floats(n_sms) for any batch (GQA group <= 8, head_dim <= 256).
size_t decode_workspace_floats(const AttentionArgs& args, int n_sms);
size_t decode_workspace_max_floats(int n_sms);
void launch_attention_decode(const AttentionArgs& args, float* workspace, int n_sms,
                             cudaStream_t stream);

// out[m, n] = sum_k x[m, k] w[n, k] (+ bias[n]) for M <= 8 rows: a bandwidth-bound GEMV.
// out is bf16 or f32 (out_f32); bias has out's dtype or is null. K a multiple of 8.
void launch_gemv(const void* x, const void* w, const void* bias, void* out, bool out_f32, int64_t m,
                 int64_t n, int64_t k, cudaStream_t stream);
inline constexpr int64_t kGemvMaxRows = 8;
// The GEMV's blocks stage their m rows of x (2 * m * k bytes) in shared memory up to this
// size, and the fused variants below need them to fit. A block may use 48 KB of shared
// memory without opting in, static and dynamic together: 1 KB stays for the kernel's static
// reduction arrays (block_inv_rms: (8 + 1) * m floats). At exactly 48 KB of rows (Qwen3-8B's
// 4096 wide at 6 tokens, 8192 at 3) the launch would fail.
inline constexpr int64_t kGemvStagedMaxBytes = 47 * 1024;

// launch_gemv (bf16 out) with the residual add + RMSNorm in front fused in: every block
// computes x = rms_norm(residual + add) * weight (add null: of residual alone) into shared
// memory, rounded as launch_rms_norm rounds; block 0 also writes residual_out (when add is
// given) and normed. residual_out and normed must not overlap add or residual.
// m * k * 2 <= kGemvStagedMaxBytes.
struct GemvNormArgs {
  const void* add;       // [m, k] or null
  const void* residual;  // [m, k]
  const void* weight;    // [k]
  void* residual_out;    // [m, k]
  void* normed;          // [m, k]
  float eps;
};
void launch_gemv_norm(const GemvNormArgs& norm, const void* w, const void* bias, void* out,
                      int64_t m, int64_t n, int64_t k, cudaStream_t stream);

// activated [m, n] = silu_mul(gate_up) of gate_up = x @ w^T, with x as launch_gemv_norm
// computes it and w = [gate | up] of 2n rows [2n, k]: the gate and up products rounded to bf16
// as the separate ops round them, then silu_mul's arithmetic. gate_up itself is not written.
// m * k * 2 <= kGemvStagedMaxBytes.
void launch_gemv_norm_silu(const GemvNormArgs& norm, const void* w, void* activated, int64_t m,
                           int64_t n, int64_t k, cudaStream_t stream);

// launch_gemv (bf16 out) of x = silu(gate) * up, with gate_up = [gate | up] rows of 2 * k:
// every block computes x into shared memory, rounded as launch_silu_mul rounds; block 0 also
// writes it to activated [m, k] (which must not overlap gate_up).
// m * k * 2 <= kGemvStagedMaxBytes.
void launch_gemv_silu(const void* gate_up, void* activated, const void* w, const void* bias,
                      void* out, int64_t m, int64_t n, int64_t k, cudaStream_t stream);

struct SampleArgs {
  const float* logits;       // [n_rows, vocab]
  const float* temperature;  // [n_rows]; <= 0: greedy
  const int32_t* top_k;      // [n_rows]; <= 0: off
  const float* top_p;        // [n_rows]; >= 1: off
  const float* min_p;        // [n_rows]; <= 0: off
  const uint64_t* seeds;     // [n_rows]
  const uint64_t* offsets;   // [n_rows]
  int32_t* tokens;           // [n_rows]
  int64_t n_rows, vocab;
};
void launch_sample(const SampleArgs& args, cudaStream_t stream);

}  // namespace hadron::cuda
