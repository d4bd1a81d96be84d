#include "engine/loaded_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "core/clock.h"
#include "core/error.h"
#include "engine/kv_fp8_check.h"
#include "engine/kv_offload_setup.h"
#include "engine/tensor_parallel_model.h"
#include "loader/hf_config.h"
#include "loader/safetensors.h"
#include "models/registry.h"

namespace hadron {
namespace {

// KV blocks for the device: --num-kv-blocks or --kv-cache-memory-bytes when given; where the
// backend knows its memory (a GPU), what --gpu-memory-utilization leaves once weights and
// activations are allocated; elsewhere (the CPU), what the flags ask for (cpu_kv_blocks).
// state_bytes: what linear-attention state slots already took from the same budget.
int64_t plan_kv_blocks(const EngineOptions& options, Backend& backend, size_t bytes_per_block,
                       int64_t blocks_per_seq, size_t state_bytes) {
  if (options.num_kv_blocks > 0) return options.num_kv_blocks;
  if (options.kv_cache_memory_bytes > 0)
    return static_cast<int64_t>(
        (options.kv_cache_memory_bytes - std::min(options.kv_cache_memory_bytes, state_bytes)) /
        bytes_per_block);
  if (const std::optional<DeviceMemory> memory = backend.memory()) {
    const double budget = options.gpu_memory_utilization * static_cast<double>(memory->total_bytes);
    const double used = static_cast<double>(memory->total_bytes - memory->free_bytes);
    const double left = budget - used;
    if (left < static_cast<double>(bytes_per_block * blocks_per_seq))
      input_error(
          "the model does not fit: {:.2f} GB of {:.2f} GB are in use after loading "
          "(weights and activations), and --gpu-memory-utilization {} leaves {:.2f} GB, "
          "less than the {:.2f} GB one sequence of --max-model-len {} needs in KV cache",
          used / 1e9, memory->total_bytes / 1e9, options.gpu_memory_utilization, left / 1e9,
          bytes_per_block * blocks_per_seq / 1e9, blocks_per_seq * options.block_size);
    return static_cast<int64_t>(left / static_cast<double>(bytes_per_block));
  }
  return cpu_kv_blocks(options.max_num_seqs, blocks_per_seq, bytes_per_block, state_bytes);
}

// The KV pool's dtype: the activations', or F8_E4M3 under --kv-cache-dtype fp8 where the
// backend and every layer take it.
DType kv_cache_dtype(const EngineOptions& options, const Backend& backend,
                     const std::vector<KvLayerSpec>& layers) {
  if (!options.kv_cache_fp8) return backend.activation_dtype();
  if (!backend.supports_fp8_kv_cache())
    input_error("--kv-cache-dtype fp8: the {} backend has no FP8 KV cache yet", backend.name());
  for (const KvLayerSpec& layer : layers)
    if (layer.is_latent())
      input_error("--kv-cache-dtype fp8: latent (MLA) caches are not stored in FP8 yet");
  return DType::F8_E4M3;
}

// Logs check_fp8_kv_cache's figures (nothing when the pool is not FP8).
void report_fp8_kv_check(LoadedModel& model) {
  const std::optional<KvCacheAgreement> check = check_fp8_kv_cache(model);
  if (!check) return;
  std::fprintf(stderr,
               "FP8 KV cache check: on a built-in probe of %lld positions, next-token mean KL "
               "%.2e nats and top-1 agreement %.3f against a %s cache\n",
               static_cast<long long>(check->positions), check->mean_kl, check->top1,
               std::string(dtype_name(model.backend().activation_dtype())).c_str());
}

}  // namespace

int64_t cpu_kv_blocks(int64_t max_num_seqs, int64_t blocks_per_seq, size_t bytes_per_block,
                      size_t state_bytes) {
  const auto budget_blocks = static_cast<int64_t>(
      (kCpuKvCacheBytes - std::min(kCpuKvCacheBytes, state_bytes)) / bytes_per_block);
  return std::max(blocks_per_seq, std::min(blocks_per_seq * max_num_seqs, budget_blocks));
}

size_t LoadedModel::kv_budget_bytes() const {
  if (options_.kv_cache_memory_bytes > 0) return options_.kv_cache_memory_bytes;
  if (const std::optional<DeviceMemory> memory = backend_->memory()) {
    const double budget =
        options_.gpu_memory_utilization * static_cast<double>(memory->total_bytes);
    const double used = static_cast<double>(memory->total_bytes - memory->free_bytes);
    return static_cast<size_t>(std::max(0.0, budget - used));
  }
  return kCpuKvCacheBytes;
}

size_t LoadedModel::allocate_state_slots() {
  const std::vector<LinearStateSpec> layers = model_->state_layers();
  if (layers.empty()) {
    state_slots_ = std::make_unique<StateSlots>();
    snapshots_ = std::make_unique<StateSnapshots>();
    return 0;
  }
  // A running sequence holds one slot, and at most --max-num-seqs run. In host memory (no
  // device memory to fill) the slots take at most half of the KV budget, and admission waits
  // for a free one. Snapshots are further rows of the same tensors, after the slots.
  const DType conv_dtype = backend_->activation_dtype();
  const size_t per_seq = KvCache::state_bytes_per_seq(layers, conv_dtype);
  const size_t budget = kv_budget_bytes();
  int64_t n_slots = options_.max_num_seqs;
  if (!backend_->memory())
    n_slots = std::clamp<int64_t>(static_cast<int64_t>(budget / 2 / per_seq), 1, n_slots);
  int64_t n_snapshots = 0;
  if (options_.enable_prefix_caching)
    n_snapshots = options_.num_state_snapshots > 0
                      ? options_.num_state_snapshots
                      : static_cast<int64_t>(options_.state_snapshot_fraction *
                                             static_cast<double>(budget) / per_seq);
  kv_->allocate_states(*backend_, layers, n_slots + n_snapshots, conv_dtype);
  state_slots_ = std::make_unique<StateSlots>(n_slots);
  snapshots_ = std::make_unique<StateSnapshots>(n_snapshots, static_cast<int32_t>(n_slots));
  return kv_->state_bytes();
}

bool LoadedModel::async_scheduling() const {
  return options_.async_scheduling.value_or(backend_->device() != Device::CPU);
}

void LoadedModel::load_model(const ModelConfig& config) {
  Backend& backend = *backend_;
  std::optional<Checkpoint> checkpoint;
  if (!options_.dummy_weights) checkpoint = Checkpoint::open(options_.model_path);
  const auto load_start = std::chrono::steady_clock::now();
  const Quantization quantization =
      options_.quantize_fp8 ? Quantization::kFp8 : Quantization::kNone;
  const auto load_plan = [&](const WeightPlan& plan, Backend& rank_backend) {
    return checkpoint ? load_weights(plan, *checkpoint, rank_backend, options_.verbose,
                                     config.quant, quantization)
                      : load_dummy_weights(plan, rank_backend, config.dtype, options_.seed,
                                           options_.verbose, config.quant, quantization);
  };
  if (rank_backends_.empty()) {
    model_ = create_model(config, backend);
    WeightPlan plan;
    model_->declare_weights(plan);
    weights_ = load_plan(plan, backend);
  } else {
    std::vector<Backend*> backends{&backend};
    for (const std::unique_ptr<Backend>& rank_backend : rank_backends_)
      backends.push_back(rank_backend.get());
    auto sharded = std::make_unique<TensorParallelModel>(config, backends, load_plan,
                                                         options_.enable_expert_parallel);
    weights_.bytes = sharded->weight_bytes();
    model_ = std::move(sharded);
  }
  if (options_.verbose && checkpoint)
    std::fprintf(stderr, "read %.2f GB of weights from %s in %.2f s\n", weights_.bytes / 1e9,
                 options_.model_path.c_str(), seconds_since(load_start));
}

std::unique_ptr<LoadedModel> LoadedModel::load(const EngineOptions& options,
                                               std::unique_ptr<Backend> owned_backend) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::move(owned_backend));
  return load(options, std::move(backends));
}

std::unique_ptr<LoadedModel> LoadedModel::load(const EngineOptions& options,
                                               std::vector<std::unique_ptr<Backend>> backends) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<LoadedModel> loaded(new LoadedModel());
  loaded->kv_ = std::make_unique<KvCache>();
  loaded->options_ = options;
  const ModelConfig config =
      load_model_config(options.config_path.empty() ? options.model_path : options.config_path,
                        parse_hf_overrides(options.hf_overrides));
  HADRON_CHECK(!backends.empty() && backends[0] != nullptr, "LoadedModel::load needs a backend");
  if (static_cast<int>(backends.size()) != options.tensor_parallel_size)
    input_error("--tensor-parallel-size {} needs as many backends, not {}",
                options.tensor_parallel_size, backends.size());
  loaded->backend_ = std::move(backends[0]);
  for (size_t r = 1; r < backends.size(); ++r)
    loaded->rank_backends_.push_back(std::move(backends[r]));
  Backend& backend = *loaded->backend_;
  loaded->load_model(config);
  const int64_t config_len =
      config.max_position_embeddings > 0 ? config.max_position_embeddings : kDefaultMaxModelLen;
  loaded->max_model_len_ =
      options.max_model_len > 0 ? options.max_model_len : std::min(config_len, kDefaultMaxModelLen);
  if (config.max_position_embeddings > 0 && loaded->max_model_len_ > config_len)
    std::fprintf(stderr,
                 "warning: a context of %lld tokens is longer than the model's "
                 "max_position_embeddings (%lld); positions past it were never trained\n",
                 static_cast<long long>(loaded->max_model_len_),
                 static_cast<long long>(config_len));
  loaded->model_->prepare(loaded->max_model_len_);
  const int64_t blocks_per_seq =
      (loaded->max_model_len_ + options.block_size - 1) / options.block_size;
  loaded->runner_ = std::make_unique<ModelRunner>(
      backend, *loaded->model_, *loaded->kv_,
      RunnerLimits{options.max_num_batched_tokens, options.max_num_seqs, blocks_per_seq});
  const std::vector<KvLayerSpec> kv_layers = loaded->model_->kv_layers();
  const DType kv_dtype = kv_cache_dtype(options, backend, kv_layers);
  const size_t state_bytes = loaded->allocate_state_slots();
  const int64_t n_blocks = plan_kv_blocks(
      options, backend, KvCache::bytes_per_block(kv_layers, options.block_size, kv_dtype),
      blocks_per_seq, state_bytes);
  if (n_blocks < blocks_per_seq)
    input_error("{} KV blocks of {} tokens cannot hold one sequence of --max-model-len {}",
                n_blocks, options.block_size, loaded->max_model_len_);
  loaded->kv_->allocate(backend, kv_layers, n_blocks, options.block_size, kv_dtype);
  // A model with linear-attention layers reuses a cached prefix only with a state snapshot
  // at its end (ADR 0011): with none kept, it recomputes every prompt.
  const bool prefix_caching =
      options.enable_prefix_caching && (state_bytes == 0 || loaded->snapshots_->enabled());
  if (options.verbose && options.enable_prefix_caching && !prefix_caching)
    std::fprintf(stderr,
                 "prefix caching is off: %s has linear-attention layers and no state snapshots "
                 "are kept (--state-snapshot-fraction 0)\n",
                 config.architecture.c_str());
  loaded->blocks_ = std::make_unique<BlockManager>(n_blocks, options.block_size, prefix_caching);
  loaded->offload_ =
      make_kv_offload(options, backend, *loaded->kv_, config, prefix_caching, state_bytes > 0);
  loaded->blocks_->set_lower_tier(loaded->offload_.get());
  if (!options.enforce_eager) {
    const auto capture_start = std::chrono::steady_clock::now();
    const int n_graphs = loaded->runner_->capture_decode_graphs(options.max_num_seqs);
    if (options.verbose && n_graphs > 0)
      std::fprintf(
          stderr, "captured %d decode graphs (batch 1..%lld) in %.2f s\n", n_graphs,
          static_cast<long long>(ModelRunner::graph_batch_sizes(
                                     std::min(options.max_num_seqs, options.max_num_batched_tokens))
                                     .back()),
          seconds_since(capture_start));
  }
  if (options.verbose && state_bytes > 0)
    std::fprintf(
        stderr,
        "linear-attention state: %lld slots and %lld prefix snapshots of %.2f MB "
        "(%.2f GB, of which snapshots %.2f GB)\n",
        static_cast<long long>(loaded->state_slots_->n_slots()),
        static_cast<long long>(loaded->snapshots_->n_snapshots()),
        state_bytes / 1e6 / loaded->kv_->n_state_slots(), state_bytes / 1e9,
        state_bytes / 1e9 * loaded->snapshots_->n_snapshots() / loaded->kv_->n_state_slots());
  if (options.verbose)
    std::fprintf(stderr,
                 "loaded %s on %s: %.2f GB of weights%s, KV cache %lld blocks of %lld tokens "
                 "(%.2f GB), in %.2f s\n",
                 config.architecture.c_str(), backend.name().c_str(), loaded->weights_.bytes / 1e9,
                 options.dummy_weights ? " (dummy)" : "", static_cast<long long>(n_blocks),
                 static_cast<long long>(options.block_size), loaded->kv_->bytes() / 1e9,
                 seconds_since(start));
  if (options.verbose) report_fp8_kv_check(*loaded);
  return loaded;
}

}  // namespace hadron
