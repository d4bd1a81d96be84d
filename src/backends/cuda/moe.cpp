// CudaBackend's mixture-of-experts ops: validation and dispatch to moe_route.cu and
// moe_experts.cu.
#include "backends/cuda/cuda_backend_impl.h"
#include "backends/cuda/moe_kernels.h"

namespace hadron::cuda {

namespace {

// Validates a routing op's tensors and parameters into the kernels' arguments.
MoeRouteArgs route_args(const Tensor& logits, const Tensor& correction_bias,
                        const MoeRoutingParams& params, const Tensor& topk_ids,
                        const Tensor& topk_weights) {
  check_tensor(logits, DType::F32, "moe_route logits");
  check_tensor(topk_ids, DType::I32, "moe_route topk_ids");
  check_tensor(topk_weights, DType::F32, "moe_route topk_weights");
  const int64_t n_tokens = logits.size(0), n_experts = logits.size(1), k = params.top_k;
  HADRON_CHECK(logits.ndim == 2 && n_experts <= kMoeMaxExperts && k >= 1 && k <= 32 &&
                   k <= n_experts && topk_ids.numel() == n_tokens * k &&
                   topk_weights.numel() == n_tokens * k,
               "moe_route {} top-{} into {} (supported: up to {} experts, top-k up to 32)",
               logits.describe(), k, topk_ids.describe(), kMoeMaxExperts);
  HADRON_CHECK(params.n_group >= 1 && params.n_group <= 32 && n_experts % params.n_group == 0 &&
                   params.topk_group >= 1 && params.topk_group <= params.n_group &&
                   k <= params.topk_group * (n_experts / params.n_group),
               "moe_route: {} experts in {} groups (at most 32) keeping {} cannot give top-{}",
               n_experts, params.n_group, params.topk_group, k);
  MoeRouteArgs args{logits.ptr<float>(),
                    nullptr,
                    false,
                    topk_ids.ptr<int32_t>(),
                    topk_weights.ptr<float>(),
                    n_tokens,
                    static_cast<int>(n_experts),
                    static_cast<int>(k),
                    params.scoring == MoeScoring::kSigmoid,
                    params.normalize,
                    static_cast<int>(params.n_group),
                    static_cast<int>(params.topk_group),
                    params.scaling};
  if (correction_bias.defined()) {
    HADRON_CHECK(on_gpu(correction_bias) && correction_bias.numel() == n_experts &&
                     (correction_bias.dtype == DType::F32 || correction_bias.dtype == DType::BF16),
                 "moe_route correction bias {} for {} experts", correction_bias.describe(),
                 n_experts);
    args.correction_bias = correction_bias.data;
    args.correction_bias_f32 = correction_bias.dtype == DType::F32;
  }
  return args;
}

}  // namespace

void CudaBackend::moe_route(const Tensor& logits, const Tensor& correction_bias,
                            const MoeRoutingParams& params, const Tensor& topk_ids,
                            const Tensor& topk_weights) {
  launch_moe_route(route_args(logits, correction_bias, params, topk_ids, topk_weights), stream_);
}

void CudaBackend::moe_router(const Tensor& x, const Tensor& router, const Tensor& router_bias,
                             const Tensor& correction_bias, const MoeRoutingParams& params,
                             const Tensor& logits, const Tensor& topk_ids,
                             const Tensor& topk_weights) {
  const int64_t n_tokens = x.size(0), hidden = x.size(-1);
  const auto aligned = [](const Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.data) % 16 == 0;
  };
  const bool fused = n_tokens <= kMoeRouterMaxTokens && hidden % 8 == 0 && x.dtype == DType::BF16 &&
                     router.dtype == DType::BF16 && aligned(x) && aligned(router);
  if (!fused) {  // prefill-sized batches: the GEMM, then the routing kernel
    Backend::moe_router(x, router, router_bias, correction_bias, params, logits, topk_ids,
                        topk_weights);
    return;
  }
  check_tensor(x, DType::BF16, "moe_router x");
  check_tensor(router, DType::BF16, "moe_router router");
  const MoeRouteArgs route = route_args(logits, correction_bias, params, topk_ids, topk_weights);
  HADRON_CHECK(x.ndim == 2 && router.ndim == 2 && router.size(0) == route.n_experts &&
                   router.size(1) == hidden && logits.size(0) == n_tokens,
               "moe_router x {} router {} logits {}", x.describe(), router.describe(),
               logits.describe());
  if (router_bias.defined()) {
    check_tensor(router_bias, DType::F32, "moe_router router_bias");
    HADRON_CHECK(router_bias.numel() == route.n_experts, "moe_router bias {} for {} experts",
                 router_bias.describe(), route.n_experts);
  }
  launch_moe_router(
      {x.data, router.data, router_bias.defined() ? router_bias.ptr<float>() : nullptr,
       logits.ptr<float>(), hidden, static_cast<unsigned*>(router_done_.data()), route},
      stream_);
}

size_t CudaBackend::moe_workspace_bytes(int64_t n_tokens, int64_t top_k, int64_t n_experts,
                                        int64_t hidden, int64_t inter) const {
  return moe_workspace_layout(nullptr, n_tokens * top_k, n_experts, hidden, inter, nullptr);
}

namespace {

// Checks the expert weights against hidden, inter and n_experts: bf16 [E, 2I, H] and
// [E, H, I], or MXFP4 blocks and scales (ops/moe.h).
void check_expert_weights(const MoeExpertWeights& w, int64_t n_experts, int64_t hidden,
                          int64_t inter) {
  const DType dtype = w.mxfp4() ? DType::U8 : DType::BF16;
  check_tensor(w.gate_up, dtype, "moe_experts gate_up");
  check_tensor(w.down, dtype, "moe_experts down");
  HADRON_CHECK(w.gate_up.ndim == 3 && w.gate_up.size(1) == 2 * inter && w.down.ndim == 3 &&
                   w.down.size(0) == n_experts && w.down.size(1) == hidden,
               "moe_experts gate_up {} down {} for hidden {}, intermediate {}",
               w.gate_up.describe(), w.down.describe(), hidden, inter);
  if (w.mxfp4()) {
    check_tensor(w.gate_up_scales, DType::U8, "moe_experts gate_up_scales");
    check_tensor(w.down_scales, DType::U8, "moe_experts down_scales");
    HADRON_CHECK(hidden % 32 == 0 && inter % 32 == 0 && hidden <= kMoeMxfp4MaxK &&
                     inter <= kMoeMxfp4MaxK &&
                     w.gate_up_scales.numel() == n_experts * 2 * inter * hidden / 32 &&
                     w.down_scales.numel() == n_experts * hidden * inter / 32,
                 "moe_experts MXFP4 scales {} and {} for {} experts, hidden {}, intermediate {} "
                 "(both multiples of 32, at most {})",
                 w.gate_up_scales.describe(), w.down_scales.describe(), n_experts, hidden, inter,
                 kMoeMxfp4MaxK);
  }
  if (w.gate_up_bias.defined()) {
    check_tensor(w.gate_up_bias, DType::BF16, "moe_experts gate_up_bias");
    HADRON_CHECK(w.gate_up_bias.numel() == n_experts * 2 * inter, "gate_up bias {}",
                 w.gate_up_bias.describe());
  }
  if (w.down_bias.defined()) {
    check_tensor(w.down_bias, DType::BF16, "moe_experts down_bias");
    HADRON_CHECK(w.down_bias.numel() == n_experts * hidden, "down bias {}", w.down_bias.describe());
  }
}

}  // namespace

void CudaBackend::moe_experts(const Tensor& x, const Tensor& topk_ids, const Tensor& topk_weights,
                              const MoeExpertWeights& weights, const MoeExpertParams& params,
                              const Tensor& workspace, const Tensor& out) {
  check_tensor(x, DType::BF16, "moe_experts x");
  check_tensor(out, DType::BF16, "moe_experts out");
  check_tensor(topk_ids, DType::I32, "moe_experts topk_ids");
  check_tensor(topk_weights, DType::F32, "moe_experts topk_weights");
  HADRON_CHECK(params.first_expert == 0 &&
                   (params.n_total_experts == 0 || params.n_total_experts == weights.n_experts()),
               "moe_experts: expert parallelism (experts {}.. of {}) is CPU-only",
               params.first_expert, params.n_total_experts);
  const int64_t n_tokens = x.size(0), hidden = x.size(1), k = topk_ids.size(-1);
  const int64_t n_experts = weights.n_experts(), inter = weights.inter();
  HADRON_CHECK(x.ndim == 2 && out.numel() == x.numel() && topk_ids.numel() == n_tokens * k &&
                   topk_weights.numel() == n_tokens * k && k <= 32 && weights.hidden() == hidden &&
                   hidden % 8 == 0 && inter % 8 == 0 && n_experts <= kMoeMaxExperts,
               "moe_experts x {} ids {} gate_up {} out {} (top-k up to 32; hidden and "
               "intermediate sizes must be multiples of 8, at most {} experts)",
               x.describe(), topk_ids.describe(), weights.gate_up.describe(), out.describe(),
               kMoeMaxExperts);
  check_expert_weights(weights, n_experts, hidden, inter);
  const size_t needed = moe_workspace_bytes(n_tokens, k, n_experts, hidden, inter);
  HADRON_CHECK(on_gpu(workspace) && workspace.nbytes() >= needed,
               "moe_experts workspace {} (needs {} bytes)", workspace.describe(), needed);
  MoeWorkspace pieces;
  moe_workspace_layout(workspace.data, n_tokens * k, n_experts, hidden, inter, &pieces);
  const auto scales = [](const Tensor& t) -> const uint8_t* {
    return t.defined() ? t.ptr<uint8_t>() : nullptr;
  };
  const MoeExpertsArgs args{x.data,
                            topk_ids.ptr<int32_t>(),
                            topk_weights.ptr<float>(),
                            weights.gate_up.data,
                            weights.gate_up_bias.data,
                            weights.down.data,
                            weights.down_bias.data,
                            scales(weights.gate_up_scales),
                            scales(weights.down_scales),
                            out.data,
                            n_tokens,
                            hidden,
                            inter,
                            static_cast<int>(n_experts),
                            static_cast<int>(k),
                            params.activation == MoeActivation::kClampedSwiGluInterleaved,
                            params.swiglu_limit,
                            params.swiglu_alpha,
                            params.accumulate};
  launch_moe_experts(args, pieces, stream_);
}

}  // namespace hadron::cuda
