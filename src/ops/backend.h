// Backend: every op the models use, declared once. backends/cpu is the reference,
// backends/cuda the fast path; tests/ops runs each op on every backend against the CPU.
//
// Conventions: activations are [T, ...] row-major and contiguous in the backend's
// activation_dtype(); weights may be any float dtype the backend accepts (the loader converts
// to weight_dtype()); accumulation and norm/softmax statistics are fp32.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/buffer.h"
#include "core/fp8.h"
#include "core/tensor.h"
#include "ops/batch_meta.h"
#include "ops/device_work.h"
#include "ops/moe.h"
#include "ops/sampling.h"

namespace hadron {

enum class RopeStyle : uint8_t {
  kNeox,        // rotate halves: (x[i], x[i + d/2]) pairs (Llama, Qwen in HF layout)
  kInterleaved  // rotate adjacent pairs (x[2i], x[2i+1]) (GPT-J, GLM)
};

// Layout of a fused q/k/v projection and what to do to it before attention.
struct QkvParams {
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  float norm_eps = 1e-6f;  // for q/k RMSNorm when given
  RopeStyle style = RopeStyle::kNeox;
};

// Shapes of a multi-head latent attention (MLA) layer (DeepSeek-V2/V3), whose cache keeps per
// token one compressed latent and one rope key shared by all heads. A head's query is
// [q_nope (nope_dim) | q_rope (rope_dim)]; its key [W_k latent | k_rope] and its value
// W_v latent, W_k and W_v being the head's rows of kv_b_proj.
struct MlaParams {
  int64_t n_heads = 0;
  int64_t nope_dim = 0;    // qk_nope_head_dim
  int64_t rope_dim = 0;    // qk_rope_head_dim
  int64_t latent_dim = 0;  // kv_lora_rank
  int64_t v_dim = 0;       // v_head_dim
  float norm_eps = 1e-6f;  // kv_a_layernorm's
  RopeStyle style = RopeStyle::kInterleaved;
  float scale = 1.0f;  // softmax scale: qk_head_dim^-0.5, times DeepSeek YaRN's mscale^2

  int64_t qk_dim() const { return nope_dim + rope_dim; }
  int64_t entry_dim() const { return latent_dim + rope_dim; }  // values per cached token
};

// Shapes of DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5). Per token it
// scores every earlier token t by sum_h w_h * relu(q_h . k_t) * scale, with n_heads query
// heads, one key per token (the indexer cache keeps it) and a learned weight w_h per head and
// query token; MLA then attends only to the top_k best-scoring tokens. RoPE turns the first
// rope_dim values of each query head and of the key.
struct IndexerParams {
  int64_t n_heads = 0;     // index_n_heads
  int64_t head_dim = 0;    // index_head_dim: values per cached key
  int64_t rope_dim = 0;    // qk_rope_head_dim
  int64_t top_k = 0;       // index_topk
  float norm_eps = 1e-6f;  // k_norm's (a LayerNorm with bias)
  RopeStyle style = RopeStyle::kNeox;
  float scale = 1.0f;  // index_head_dim^-0.5 * index_n_heads^-0.5
};

struct AttentionParams {
  float scale = 1.0f;       // softmax scale, usually 1/sqrt(head_dim)
  int sliding_window = 0;   // 0: full causal; else attend to the last `sliding_window` keys
  float logit_softcap = 0;  // 0: none
  // [n_heads] or undefined: a learned logit per head that joins each softmax's denominator
  // and adds no value (gpt-oss "sinks").
  Tensor sinks;
};

// The residual add and RMSNorm in front of a projection (Backend::add_rms_norm_linear):
//   residual_out = residual + add; normed = rms_norm(residual_out) * weight
// or, when add is undefined, normed = rms_norm(residual) * weight (residual_out unused).
// Out of place, so that a backend may fuse it into the projection: residual_out must not
// overlap add or residual. All [T, H] but weight [H].
struct AddRmsNorm {
  Tensor add;
  Tensor residual;
  Tensor residual_out;
  Tensor weight;
  float eps = 1e-6f;
  Tensor normed;  // written: the projection's input
};
// Throws unless residual_out is its own buffer when add is given (every backend's
// add_rms_norm_linear checks this first).
void check_out_of_place(const AddRmsNorm& norm);
class Backend;
// The norm alone, as add_rms_norm_linear's default runs it: writes norm.normed (and
// norm.residual_out when add is given).
void apply_add_rms_norm(Backend& backend, const AddRmsNorm& norm);

// The shape of a gated DeltaNet layer (linear attention, Qwen3-Next / Qwen3.5).
struct LinearAttentionParams {
  int64_t n_key_heads = 0;    // Hk: q and k heads, repeated to the value heads
  int64_t n_value_heads = 0;  // Hv, a multiple of Hk
  int64_t key_head_dim = 0;   // Dk
  int64_t value_head_dim = 0;
  int64_t conv_kernel = 0;  // the causal convolution's width

  int64_t key_dim() const { return n_key_heads * key_head_dim; }
  int64_t value_dim() const { return n_value_heads * value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }  // [q | k | v] channels
};

// Bytes of a device's memory: what allocate can still hand out, and all of it.
struct DeviceMemory {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Device device() const = 0;
  virtual std::string name() const = 0;
  // dtype of activations between ops (CPU: F32; CUDA: BF16).
  virtual DType activation_dtype() const = 0;
  // dtype the loader stores a weight in, given the checkpoint's dtype.
  virtual DType weight_dtype(DType checkpoint_dtype) const = 0;

  // Memory on this backend's device, uninitialised.
  virtual Buffer allocate(size_t bytes) = 0;
  // The device's free and total memory (a GPU's); nullopt where the backend cannot tell (host
  // memory, which the operating system manages).
  virtual std::optional<DeviceMemory> memory() { return std::nullopt; }
  // Copies between host and device or within one; same dtype, shape and contiguity.
  virtual void copy(const Tensor& src, const Tensor& dst) = 0;
  // Waits until all queued work is done.
  virtual void synchronize() = 0;

  // Host memory the device reads and writes asynchronously (pinned on CUDA).
  virtual Buffer allocate_host(size_t bytes) { return Buffer::host(bytes); }
  // As copy, but may return before the copy is done when the host side came from
  // allocate_host: leave that memory alone until an event recorded after the copy completes.
  virtual void copy_async(const Tensor& src, const Tensor& dst) { copy(src, dst); }
  // Marks the work queued so far.
  virtual std::unique_ptr<DeviceEvent> record_event() { return std::make_unique<CompletedEvent>(); }
  // Runs `work` (ops of this backend) once into a graph; null when the backend has none.
  // The work must not allocate, copy from host memory or synchronize.
  virtual std::unique_ptr<DeviceGraph> capture_graph(const CaptureFn& work) {
    (void)work;
    return nullptr;
  }

  // out[t, :] = table[ids[t], :].  ids: I32 [T]; table: [V, H]; out: [T, H].
  virtual void embedding(const Tensor& ids, const Tensor& table, const Tensor& out) = 0;

  // out = x / rms(x) * weight over the last dim.  x, out: [R, H]; weight: [H].
  virtual void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) = 0;

  // residual += x; out = rms_norm(residual).  x, residual, out: [T, H]; weight: [H].
  virtual void add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                            float eps, const Tensor& out) = 0;

  // out = x @ weight^T (+ bias).  x: [T, K]; weight: [N, K]; bias: [N] or undefined;
  // out: [T, N]. out may be F32 whatever the activation dtype (used for logits).
  virtual void linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
                      const Tensor& out) = 0;

  // FP8 linear (ops/fp8.h; backends without it refuse: supports_fp8_linear is false and the
  // two ops below throw). A model quantizes its activations with the first op, then multiplies.
  virtual bool supports_fp8_linear() const { return false; }
  // Dynamic per-token-group quantization (DeepSeek's act_quant): per row t and group g of
  // out.group columns (the last group may be short), s = fp8_scale_for(amax |x[t, g]|, ue8m0),
  // out.q[t, k] = e4m3(x[t, k] / s) (round to nearest even), out.scales[t, g] = s.
  // x: [T, K] activation dtype or F32; out as Fp8Activations (group a multiple of 16, or K).
  virtual void quantize_fp8_per_token_group(const Tensor& x, bool ue8m0, const Fp8Activations& out);
  // out = x @ w^T (+ bias) on the dequantized values, as DeepSeek's block-scaled GEMM computes
  // it: k splits into segments over which both the activation and the weight scale are
  // constant (x.group a multiple of weight.block_k or the reverse); per segment the e4m3
  // products (exact in f32) are summed in f32, then scaled by x.scales[t, seg] *
  // weight.scales[n / block_n, seg]; segments and bias are summed in f32.
  // x: as Fp8Activations [T, K]; weight: as Fp8Weight [N, K]; bias: [N] any float dtype or
  // undefined; out: [T, N], activation dtype or F32.
  virtual void fp8_linear(const Fp8Activations& x, const Fp8Weight& weight, const Tensor& bias,
                          const Tensor& out);

  // norm (see AddRmsNorm), then out = norm.normed @ weight^T (+ bias) as linear. The default
  // runs the two ops; a backend may fuse them (CUDA does for decode-sized batches).
  virtual void add_rms_norm_linear(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                                   const Tensor& out);

  // norm (see AddRmsNorm), then gate_up = norm.normed @ weight^T as linear, then activated =
  // silu_mul(gate_up): a gated MLP up to its down projection. weight: [2I, H] ([gate | up]);
  // gate_up: [T, 2I], scratch a fused path may leave unwritten; activated: [T, I]. The default
  // runs the ops; a backend may fuse them (CUDA does for decode-sized batches).
  virtual void add_rms_norm_linear_silu(const AddRmsNorm& norm, const Tensor& weight,
                                        const Tensor& gate_up, const Tensor& activated);

  // activated = silu_mul(gate_up), then out = activated @ weight^T (+ bias) as linear.
  // gate_up: [T, 2I]; activated: [T, I], written, not overlapping gate_up. The default runs
  // the two ops; a backend may fuse them (CUDA does for decode-sized batches).
  virtual void silu_mul_linear(const Tensor& gate_up, const Tensor& activated, const Tensor& weight,
                               const Tensor& bias, const Tensor& out);

  // Rotary embedding in place on the first rotary_dim dims of each head.
  // x: [T, n_heads, head_dim]; positions: I32 [T]; cos_sin: F32 [max_pos, rotary_dim]
  // holding cos for the first rotary_dim/2 columns and sin for the rest.
  virtual void rope(const Tensor& x, const Tensor& positions, const Tensor& cos_sin,
                    RopeStyle style) = 0;

  // Writes this step's K and V into the paged cache at slot_mapping.
  // k, v: [T, n_kv_heads, head_dim]; k_cache, v_cache: [n_blocks, block_size, n_kv_heads,
  // head_dim]; slot_mapping: I32 [T].
  virtual void store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache,
                        const Tensor& v_cache, const Tensor& slot_mapping) = 0;

  // The step between the qkv projection and attention, fused: splits qkv, applies per-head
  // RMSNorm to q and k when q_norm/k_norm are defined, RoPE (as `rope`) to q and k, writes
  // q to q_out and k, v into the paged cache (as `store_kv`).
  // qkv: [T, (n_heads + 2 n_kv_heads) * head_dim], rows [q | k | v]; q_norm, k_norm:
  // [head_dim] or undefined; positions: I32 [T]; q_out: [T, n_heads, head_dim].
  virtual void qkv_rope_store(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                              const Tensor& positions, const Tensor& cos_sin,
                              const QkvParams& params, const Tensor& k_cache, const Tensor& v_cache,
                              const Tensor& slot_mapping, const Tensor& q_out) = 0;

  // An attention block's input projection up to its cache writes: add_rms_norm_linear(norm,
  // weight, bias, qkv), then qkv_rope_store(qkv, ...). qkv is scratch a fused path may leave
  // unwritten. The default runs the two; a backend may fuse them (CUDA does for 3-64 rows).
  virtual void qkv_projection(const AddRmsNorm& norm, const Tensor& weight, const Tensor& bias,
                              const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm,
                              const Tensor& positions, const Tensor& cos_sin,
                              const QkvParams& params, const Tensor& k_cache, const Tensor& v_cache,
                              const Tensor& slot_mapping, const Tensor& q_out);

  // Throws an input error, naming what this backend supports, when its attention ops cannot run
  // heads of this shape; called when a model is made, before its weights load.
  virtual void check_attention(int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) const {
    (void)n_heads, (void)n_kv_heads, (void)head_dim;
  }
  // Whether store_kv, qkv_rope_store and attention take F8_E4M3 caches (KvCache's FP8 layout:
  // e4m3 codes at scale 1, the same shapes); --kv-cache-dtype fp8 is refused elsewhere.
  virtual bool supports_fp8_kv_cache() const { return false; }
  // Causal grouped-query attention of this step's queries over the paged cache (which
  // already holds this step's K/V). q, out: [T, n_heads, head_dim]; caches as in store_kv.
  virtual void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                         const BatchMeta& meta, const AttentionParams& params,
                         const Tensor& out) = 0;

  // Multi-head latent attention (MlaParams). Backends without it refuse MLA models up front:
  // check_mla throws an input error naming the backend, as do the two ops below.
  virtual void check_mla(const MlaParams& params) const;

  // MLA's step between its projections and attention: RoPE (as `rope`) on the last rope_dim
  // values of each head of q, in place; RMSNorm (kv_norm, params.norm_eps) on kv's latent and
  // RoPE on its rope key, written as one cache entry at slot_mapping (kv itself is left as is).
  // q: [T, n_heads, nope_dim + rope_dim]; kv: [T, latent_dim + rope_dim] (kv_a_proj_with_mqa's
  // output); kv_norm: [latent_dim]; positions: I32 [T]; cos_sin: F32 [max_pos, rope_dim];
  // latent_cache: [n_blocks, block_size, 1, latent_dim + rope_dim]; slot_mapping: I32 [T].
  virtual void mla_rope_store(const Tensor& q, const Tensor& kv, const Tensor& kv_norm,
                              const Tensor& positions, const Tensor& cos_sin,
                              const MlaParams& params, const Tensor& latent_cache,
                              const Tensor& slot_mapping);

  // Causal MLA over the latent cache (which already holds this step's entries), in the
  // absorbed form: per token and head, q_latent = W_k^T q_nope; score_j = (q_latent . latent_j +
  // q_rope . k_rope_j) * scale; out = W_v (sum_j softmax_j latent_j). kv_b: [n_heads * (nope_dim
  // + v_dim), latent_dim], kv_b_proj's weight: per head W_k [nope_dim, latent_dim] then
  // W_v [v_dim, latent_dim]. q: as after mla_rope_store; out: [T, n_heads, v_dim].
  virtual void mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                             const BatchMeta& meta, const MlaParams& params, const Tensor& out);

  // Throws an input error when this backend cannot run gated DeltaNet layers of this shape;
  // called when a model is made, before its weights load. The default refuses them all: the
  // ops below then stay unimplemented.
  virtual void check_linear_attention(const LinearAttentionParams& params) const;
  // Linear-attention ops read and write per-sequence state in slots: sequence s uses slot
  // meta.state_slots[s] (negative: a padding row, skipped) and starts from zero state when its
  // first token this step has position 0, else from the slot's state (a chunked prefill or a
  // decode carries it across steps).
  //
  // Causal depthwise convolution over each sequence's tokens, then SiLU. x, out: [T, C];
  // weight: [C, K]; conv_states: [n_slots, C, K - 1], the last K - 1 inputs of each sequence
  // (zeros before its first token), updated.
  virtual void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_states,
                             const BatchMeta& meta, const Tensor& out);
  // The gated delta rule. qkv: [T, conv_dim] (the convolution's output, [q | k | v]); ba: F32 [T,
  // 2 Hv], [b | a]; a_log, dt_bias: [Hv]. Per token and value head h (its key head h / (Hv /
  // Hk)): q, k L2-normalised (eps 1e-6), q scaled by 1/sqrt(Dk); beta = sigmoid(b); g =
  // -exp(a_log) * softplus(a + dt_bias); S = exp(g) S; S += k (beta (v - S^T k))^T;
  // out = S^T q. states: F32 [n_slots, Hv, Dk, Dv], updated; out: [T, Hv, Dv].
  virtual void gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log,
                                const Tensor& dt_bias, const Tensor& states, const BatchMeta& meta,
                                const LinearAttentionParams& params, const Tensor& out);
  // out = rms_norm(x) * weight * silu(gate) over the last dim. x, gate, out: [R, D]; weight: [D].
  virtual void rms_norm_gated(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps,
                              const Tensor& out);
  // out = x * sigmoid(gate). x, out: [T, W]; gate: [T, W], or [T, 1] for one gate per row.
  virtual void sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& out);

  // DeepSeek sparse attention (IndexerParams) on top of MLA. Backends without it refuse such
  // models up front: check_sparse_attention throws an input error naming the backend, as do
  // the three ops below.
  virtual void check_sparse_attention(const IndexerParams& params) const;

  // The indexer's step between its projections and scoring: RoPE (as `rope`) on the first
  // rope_dim values of each head of q, in place; LayerNorm (k_norm, k_bias, params.norm_eps) on
  // k and RoPE on its first rope_dim values, written to index_cache at slot_mapping (k itself
  // is left as is). q: [T, n_heads, head_dim]; k: [T, head_dim]; k_norm, k_bias: [head_dim];
  // positions: I32 [T]; cos_sin: F32 [max_pos, rope_dim];
  // index_cache: [n_blocks, block_size, head_dim]; slot_mapping: I32 [T].
  virtual void indexer_rope_store(const Tensor& q, const Tensor& k, const Tensor& k_norm,
                                  const Tensor& k_bias, const Tensor& positions,
                                  const Tensor& cos_sin, const IndexerParams& params,
                                  const Tensor& index_cache, const Tensor& slot_mapping);

  // Causal top-k selection: per token, the positions of the top_k earlier tokens (itself
  // included) by index score (IndexerParams), best first; ties go to the earlier position; a
  // token with fewer than top_k predecessors selects all of them and pads with -1.
  // q: as after indexer_rope_store; head_weights: [T, n_heads] (weights_proj's output);
  // index_cache: holds this step's keys already; selected: I32 [T, top_k].
  virtual void indexer_select(const Tensor& q, const Tensor& head_weights,
                              const Tensor& index_cache, const BatchMeta& meta,
                              const IndexerParams& params, const Tensor& selected);

  // mla_attention restricted per token to the positions in `selected` (indexer_select's
  // output; -1 entries are skipped). Equals mla_attention when every token selects all of
  // its predecessors.
  virtual void sparse_mla_attention(const Tensor& q, const Tensor& latent_cache, const Tensor& kv_b,
                                    const Tensor& selected, const BatchMeta& meta,
                                    const MlaParams& params, const Tensor& out);

  // out = silu(gate) * up, where gate_up = [gate | up].  gate_up: [T, 2I]; out: [T, I].
  virtual void silu_mul(const Tensor& gate_up, const Tensor& out) = 0;

  // out[r, :] = x[rows[r], :].  x: [T, H]; rows: I32 [R]; out: [R, H].
  virtual void gather_rows(const Tensor& x, const Tensor& rows, const Tensor& out) = 0;

  // Mixture-of-experts routing (ops/moe.h says how). logits: F32 [T, E]; correction_bias:
  // [E] (any float dtype) or undefined; topk_ids: I32 [T, top_k]; topk_weights: F32 [T, top_k].
  virtual void moe_route(const Tensor& logits, const Tensor& correction_bias,
                         const MoeRoutingParams& params, const Tensor& topk_ids,
                         const Tensor& topk_weights) = 0;

  // The router and the routing in one: logits = x @ router^T (+ router_bias), then
  // moe_route(logits, ...). x: [T, H]; router: [E, H]; router_bias: F32 [E] or undefined;
  // logits: F32 [T, E] (written: the caller's scratch). The default runs linear, then
  // moe_route; a backend may fuse them (CUDA does for decode-sized batches).
  virtual void moe_router(const Tensor& x, const Tensor& router, const Tensor& router_bias,
                          const Tensor& correction_bias, const MoeRoutingParams& params,
                          const Tensor& logits, const Tensor& topk_ids, const Tensor& topk_weights);

  // out[t] (+)= sum_j topk_weights[t, j] * expert_{topk_ids[t, j]}(x[t]), where
  // expert_e(x) = down_e(act(gate_up_e x + gate_up_bias_e)) + down_bias_e.
  // x, out: [T, H]; topk_ids: I32 [T, k]; topk_weights: F32 [T, k]; weights as MoeExpertWeights;
  // workspace: U8 [moe_workspace_bytes(T, k, E, H, I)] (undefined when that is 0).
  virtual void moe_experts(const Tensor& x, const Tensor& topk_ids, const Tensor& topk_weights,
                           const MoeExpertWeights& weights, const MoeExpertParams& params,
                           const Tensor& workspace, const Tensor& out) = 0;
  // Scratch memory moe_experts needs (the caller provides it, so steps can be graph-captured).
  virtual size_t moe_workspace_bytes(int64_t n_tokens, int64_t top_k, int64_t n_experts,
                                     int64_t hidden, int64_t inter) const {
    (void)n_tokens, (void)top_k, (void)n_experts, (void)hidden, (void)inter;
    return 0;
  }

  // A step's first op: copies the payload of the image of the turn staging.counter names into
  // `inputs` (U8, its size) and starts the next turn. The image's header must name the same
  // turn (a mismatch is an error; on CUDA it aborts the context). The payload's first n_ids
  // int32 words are token ids, some not known when the step was queued: an id < 0 becomes
  // sampled[-id - 1], the token the previous step sampled in that row (0 past the end of
  // `sampled`: I32 [R]); other ids stay.
  // The default runs on the host through copies.
  virtual void begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                          const Tensor& sampled);
  // A sampling step's last op: sampled (I32 [R]) into the tokens buffer of the step's turn
  // (the one begin_step started), readable once an event recorded after it completes.
  virtual void end_step(const StepStaging& staging, const Tensor& sampled);

  // One token per row of logits as ops/sampling.h defines it.  logits: F32 [R, V];
  // tokens: I32 [R].  The default runs the host reference (ops/sampling.cpp),
  // copying through this backend when its device is not the CPU.
  virtual void sample(const Tensor& logits, const SamplingBatch& batch, const Tensor& tokens) {
    sample_on_host(*this, logits, batch, tokens);
  }

 protected:
  static void sample_on_host(Backend& backend, const Tensor& logits, const SamplingBatch& batch,
                             const Tensor& tokens);
};

}  // namespace hadron
