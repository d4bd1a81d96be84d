// TensorParallelModel: one model run by N tensor-parallel ranks that are threads of this
// process (CPU backends, ADR 0009). Rank 0 runs on the caller's thread with the caller's KV
// cache and arena; ranks 1..N-1 run on threads of their own, each with its own backend, model
// shard, KV cache (the same blocks as the caller's) and arena. Every rank runs every step on
// the same BatchMeta, which lies in host memory all of them read; the collectives inside the
// shards (dist/thread_communicator.h) keep them in step. The runner sees one model: forward
// returns rank 0's hidden states and compute_logits the gathered logits, sampled once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "dist/thread_communicator.h"
#include "models/model.h"
#include "models/weight_loader.h"

namespace hadron {

class TensorParallelModel final : public Model {
 public:
  // Fills one rank's plan into its backend (from a checkpoint or with dummy values).
  using LoadRank = std::function<LoadedWeights(const WeightPlan& plan, Backend& backend)>;

  // Rank r runs on backends[r]; every backend must be a CPU one. expert_parallel: MoE experts
  // placed whole on ranks. Throws InputError for sizes the model cannot be split into.
  TensorParallelModel(const ModelConfig& config, std::vector<Backend*> backends,
                      const LoadRank& load, bool expert_parallel = false);
  ~TensorParallelModel() override;

  int world_size() const { return static_cast<int>(ranks_.size()); }
  size_t weight_bytes() const;  // all ranks'

  // The ranks declare and load their own shards (in the constructor).
  void declare_weights(WeightPlan& plan) override;
  void prepare(int64_t max_positions) override;
  std::vector<KvLayerSpec> kv_layers() const override { return ranks_[0].model->kv_layers(); }
  std::vector<LinearStateSpec> state_layers() const override {
    return ranks_[0].model->state_layers();
  }
  Tensor forward(const BatchMeta& meta, const KvCache& kv, Arena& arena) override;
  void compute_logits(const Tensor& hidden, const Tensor& logits) override;

 private:
  struct Rank {
    Backend* backend = nullptr;
    std::unique_ptr<Communicator> comm;
    std::unique_ptr<Model> model;
    LoadedWeights weights;
    std::unique_ptr<KvCache> kv;  // ranks above 0: shaped like the caller's, on first use
    Arena arena;                  // ranks above 0: as large as the caller's
    Tensor hidden;                // the last forward's
  };

  // Runs job(rank) on every rank at once (rank 0 on this thread) and returns when all are
  // done; a rank's exception aborts the group (so no rank waits forever in a collective) and
  // is rethrown here.
  void run_all(const std::function<void(int rank)>& job);
  void worker_loop(int rank);
  // Ranks above 0: their KV cache and arena mirror the caller's.
  void mirror(Rank& rank, const KvCache& kv, const Arena& arena);

  ThreadGroup group_;
  std::vector<Rank> ranks_;
  std::vector<std::thread> workers_;  // ranks 1..N-1
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr first_error_;  // of the running job
};

}  // namespace hadron
