// Model: declares its weights as data and runs forward over a batch on one backend.
#pragma once

#include <memory>
#include <vector>

#include "core/arena.h"
#include "core/error.h"
#include "dist/communicator.h"
#include "kv/kv_cache.h"
#include "loader/hf_config.h"
#include "loader/weight_plan.h"
#include "ops/backend.h"

namespace hadron {

// A model's place in a tensor-parallel group: rank 0 of 1 (no communicator) is unsharded.
struct TensorParallel {
  int rank = 0;
  int world = 1;
  Communicator* comm = nullptr;  // the rank's, for the collectives of forward and logits
  bool expert_parallel = false;  // MoE experts placed on ranks rather than each split
};

class Model {
 public:
  Model(const ModelConfig& config, Backend& backend) : config_(config), backend_(backend) {}
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }

  // Before declare_weights: makes this model rank tp.rank of a tensor-parallel group, which
  // then declares that rank's shards into a WeightPlan(tp.rank, tp.world). A model that cannot
  // be sharded throws InputError for a world above 1.
  virtual void set_tensor_parallel(const TensorParallel& tp) {
    if (tp.world > 1)
      throw InputError(config_.architecture + " does not support tensor parallelism yet");
  }
  // Every checkpoint tensor the model reads, mapped to its parameters.
  virtual void declare_weights(WeightPlan& plan) = 0;
  // Called once the weights are loaded: builds derived tables (rope) for up to max_positions.
  virtual void prepare(int64_t max_positions) = 0;
  // One entry per layer that keeps a KV cache.
  virtual std::vector<KvLayerSpec> kv_layers() const = 0;
  // One entry per linear-attention layer, whose per-sequence state lives in state slots.
  virtual std::vector<LinearStateSpec> state_layers() const { return {}; }
  // Runs the decoder on meta's tokens and returns the final hidden states of
  // meta.logits_rows: [R, hidden] in the backend's activation dtype, allocated from `arena`.
  virtual Tensor forward(const BatchMeta& meta, const KvCache& kv, Arena& arena) = 0;
  // logits: F32 [R, vocab] from hidden [R, hidden].
  virtual void compute_logits(const Tensor& hidden, const Tensor& logits) = 0;

 protected:
  const ModelConfig config_;
  Backend& backend_;
};

}  // namespace hadron
