// LoadedModel: a backend, a model with its weights, a KV pool and a runner, made from
// a model folder (or dummy weights) and the user's options.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/model_runner.h"
#include "engine/scheduler.h"
#include "engine/spec_config.h"
#include "kv/block_manager.h"
#include "kv/offload_options.h"
#include "kv/offload_tiers.h"
#include "kv/state_slots.h"
#include "kv/state_snapshots.h"
#include "models/weight_loader.h"

namespace hadron {

inline constexpr double kDefaultStateSnapshotFraction = 0.1;

struct EngineOptions {
  std::string model_path;
  std::string config_path;     // empty: model_path's config.json
  std::string hf_overrides;    // --hf-overrides: a JSON object merged into the config (or empty)
  bool dummy_weights = false;  // --load-format dummy
  // --quantization fp8: linear weights kept in (or quantized at load to) FP8 (Quantization).
  bool quantize_fp8 = false;
  bool kv_cache_fp8 = false;    // --kv-cache-dtype fp8 (fp8_e4m3): kv/kv_cache.h's FP8 pool
  std::string device = "auto";  // auto | cpu | cuda (for backends/backend_factory.h)
  int64_t max_model_len = 0;    // 0: the config's, capped at kDefaultMaxModelLen
  int64_t max_num_seqs = kDefaultMaxNumSeqs;
  int64_t max_num_batched_tokens = kDefaultMaxNumBatchedTokens;
  int64_t kv_reserve_per_seq = 0;  // --kv-reserve-per-seq (SchedulerConfig)
  int64_t block_size = 16;
  int64_t num_kv_blocks = 0;         // 0: sized automatically (--num-kv-blocks overrides)
  size_t kv_cache_memory_bytes = 0;  // 0: sized automatically (--kv-cache-memory-bytes)
  double gpu_memory_utilization = 0.9;
  uint64_t seed = 0;
  bool enable_prefix_caching = true;
  // Hybrid models' prefix caching: linear-attention state snapshots take this fraction of the
  // KV budget (--state-snapshot-fraction), or num_state_snapshots of them when > 0
  // (--num-state-snapshots). 0 snapshots: prefix caching is off for such models.
  double state_snapshot_fraction = kDefaultStateSnapshotFraction;
  int64_t num_state_snapshots = 0;
  bool enforce_eager = false;  // no CUDA graphs for decode steps (--enforce-eager)
  // Schedule step N+1 while the device runs step N (GPU backends; off on the CPU unless set).
  std::optional<bool> async_scheduling;
  std::optional<SpeculativeConfig> speculative;  // --speculative-config
  bool verbose = true;                           // progress and timings on stderr
  OffloadOptions offload;  // --kv-offloading-size, --kv-offload-disk-dir, --kv-offload-disk-gb
  // --tensor-parallel-size: ranks the model is sharded over (threads of this process, each
  // with its own CPU backend; engine/tensor_parallel_model.h).
  int tensor_parallel_size = 1;
  // --enable-expert-parallel: those ranks hold whole MoE experts (as vLLM's flag), not a part
  // of every expert.
  bool enable_expert_parallel = false;
};

inline constexpr int64_t kDefaultMaxModelLen = 8192;

// The CPU's KV pool unless --kv-cache-memory-bytes or --num-kv-blocks says otherwise: host
// memory is shared with everything else, and a CPU serves few sequences at a time.
inline constexpr size_t kCpuKvCacheBytes = 64'000'000;

// KV blocks of a CPU pool: max_num_seqs sequences of blocks_per_seq blocks (what --max-num-seqs
// and --max-model-len ask for), within kCpuKvCacheBytes less the state_bytes linear-attention
// state took, but always one whole sequence.
int64_t cpu_kv_blocks(int64_t max_num_seqs, int64_t blocks_per_seq, size_t bytes_per_block,
                      size_t state_bytes = 0);

class LoadedModel {
 public:
  // Loads onto `owned_backend` (from backends/backend_factory.h's make_backend, or a test's).
  static std::unique_ptr<LoadedModel> load(const EngineOptions& options,
                                           std::unique_ptr<Backend> owned_backend);
  // Tensor parallel: one backend per rank (options.tensor_parallel_size of them); rank 0's runs
  // the runner, the sampler and the KV pool's bookkeeping.
  static std::unique_ptr<LoadedModel> load(const EngineOptions& options,
                                           std::vector<std::unique_ptr<Backend>> backends);

  Backend& backend() { return *backend_; }
  Model& model() { return *model_; }
  const ModelConfig& config() const { return model_->config(); }
  ModelRunner& runner() { return *runner_; }
  KvCache& kv() { return *kv_; }
  BlockManager& blocks() { return *blocks_; }
  // Linear-attention state slots (disabled for models without such layers).
  StateSlots& state_slots() { return *state_slots_; }
  // The prefix cache's host and disk tiers; null without --kv-offloading-size.
  KvOffload* offload() { return offload_.get(); }
  const KvOffload* offload() const { return offload_.get(); }
  // Linear-attention state snapshots for prefix caching (disabled without such layers).
  StateSnapshots& snapshots() { return *snapshots_; }
  int64_t max_model_len() const { return max_model_len_; }
  const EngineOptions& options() const { return options_; }
  size_t weight_bytes() const { return weights_.bytes; }
  bool async_scheduling() const;

 private:
  LoadedModel() = default;
  // Creates the model (sharded over the ranks' backends when there are several) and loads its
  // weights from the checkpoint or with dummy values.
  void load_model(const ModelConfig& config);
  // Allocates the linear-attention state slots (one per --max-num-seqs sequence; on the CPU
  // within half the KV budget) and the prefix snapshots (state_snapshot_fraction of the
  // budget) ahead of the KV pool; returns the bytes they took from the pool's budget.
  size_t allocate_state_slots();
  // The bytes the KV pool and the states share: --kv-cache-memory-bytes, else what
  // --gpu-memory-utilization leaves on a device that knows its memory, else kCpuKvCacheBytes.
  size_t kv_budget_bytes() const;

  std::unique_ptr<Backend> backend_;
  std::vector<std::unique_ptr<Backend>> rank_backends_;  // tensor-parallel ranks 1..N-1
  std::unique_ptr<Model> model_;
  LoadedWeights weights_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<KvOffload> offload_;  // before blocks_, which calls it
  std::unique_ptr<BlockManager> blocks_;
  std::unique_ptr<StateSlots> state_slots_;
  std::unique_ptr<StateSnapshots> snapshots_;
  std::unique_ptr<ModelRunner> runner_;
  int64_t max_model_len_ = 0;
  EngineOptions options_;
};

}  // namespace hadron
