#include "engine/tensor_parallel_model.h"

#include "core/error.h"
#include "models/registry.h"

namespace hadron {

TensorParallelModel::TensorParallelModel(const ModelConfig& config, std::vector<Backend*> backends,
                                         const LoadRank& load, bool expert_parallel)
    : Model(config, *backends.at(0)),
      group_(static_cast<int>(backends.size())),
      ranks_(backends.size()) {
  const int world = world_size();
  for (int r = 0; r < world; ++r) {
    Rank& rank = ranks_[r];
    rank.backend = backends[r];
    if (rank.backend->device() != Device::CPU)
      input_error(
          "--tensor-parallel-size {} runs on the CPU backend only (--device cpu): GPUs need "
          "the NCCL communicator, which is not built yet",
          world);
    rank.comm = group_.communicator(r);
    rank.model = create_model(config, *rank.backend);
    rank.model->set_tensor_parallel({r, world, rank.comm.get(), expert_parallel});
    WeightPlan plan(r, world);
    rank.model->declare_weights(plan);
    rank.weights = load(plan, *rank.backend);
  }
  for (int r = 1; r < world; ++r) workers_.emplace_back([this, r] { worker_loop(r); });
}

TensorParallelModel::~TensorParallelModel() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

size_t TensorParallelModel::weight_bytes() const {
  size_t bytes = 0;
  for (const Rank& rank : ranks_) bytes += rank.weights.bytes;
  return bytes;
}

void TensorParallelModel::declare_weights(WeightPlan&) {
  HADRON_CHECK(false, "a tensor-parallel model's ranks declare and load their shards themselves");
}

void TensorParallelModel::prepare(int64_t max_positions) {
  for (Rank& rank : ranks_) rank.model->prepare(max_positions);
}

void TensorParallelModel::run_all(const std::function<void(int rank)>& job) {
  {
    const std::lock_guard lock(mutex_);
    HADRON_CHECK(!group_.aborted(), "a tensor-parallel rank failed in an earlier step");
    job_ = &job;
    pending_ = world_size() - 1;
    first_error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  try {
    job(0);
  } catch (...) {
    const std::lock_guard lock(mutex_);
    if (!first_error_) first_error_ = std::current_exception();
    group_.abort();
  }
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
  if (first_error_) std::rethrow_exception(first_error_);
}

void TensorParallelModel::worker_loop(int rank) {
  uint64_t seen_generation = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen_generation; });
      if (stop_) return;
      seen_generation = generation_;
    }
    try {
      (*job_)(rank);
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!first_error_) first_error_ = std::current_exception();
      group_.abort();
    }
    {
      const std::lock_guard lock(mutex_);
      --pending_;
    }
    done_cv_.notify_one();
  }
}

void TensorParallelModel::mirror(Rank& rank, const KvCache& kv, const Arena& arena) {
  if (!rank.kv || rank.kv->n_blocks() != kv.n_blocks() ||
      rank.kv->block_size() != kv.block_size()) {
    const std::vector<KvLayerSpec> layers = rank.model->kv_layers();
    rank.kv = std::make_unique<KvCache>();
    const DType dtype = layers.empty() ? rank.backend->activation_dtype() : kv.k_cache(0).dtype;
    rank.kv->allocate(*rank.backend, layers, kv.n_blocks(), kv.block_size(), dtype);
  }
  if (rank.arena.capacity() < arena.capacity())
    rank.arena = Arena(rank.backend->allocate(arena.capacity()));
}

Tensor TensorParallelModel::forward(const BatchMeta& meta, const KvCache& kv, Arena& arena) {
  for (int r = 1; r < world_size(); ++r) mirror(ranks_[r], kv, arena);
  run_all([&](int r) {
    Rank& rank = ranks_[r];
    if (r == 0) {
      rank.hidden = rank.model->forward(meta, kv, arena);
    } else {
      rank.arena.reset();
      rank.hidden = rank.model->forward(meta, *rank.kv, rank.arena);
    }
  });
  return ranks_[0].hidden;
}

void TensorParallelModel::compute_logits(const Tensor& hidden, const Tensor& logits) {
  // hidden: rows [first, first + n) of the last forward's hidden states; every rank takes the
  // same rows of its own, and only rank 0's gathered logits are kept.
  const Tensor& hidden0 = ranks_[0].hidden;
  const auto row_bytes = static_cast<int64_t>(hidden0.size(1) * dtype_size(hidden0.dtype));
  const int64_t first =
      (static_cast<const char*>(hidden.data) - static_cast<const char*>(hidden0.data)) / row_bytes;
  const int64_t n_rows = hidden.size(0);
  HADRON_CHECK(first >= 0 && first + n_rows <= hidden0.size(0), "logits of rows {}..{} of {}",
               first, first + n_rows, hidden0.describe());
  run_all([&](int r) {
    Rank& rank = ranks_[r];
    if (r == 0) return rank.model->compute_logits(hidden, logits);
    const size_t mark = rank.arena.used();
    const Tensor scratch = rank.arena.alloc(DType::F32, {n_rows, logits.size(1)});
    rank.model->compute_logits(rank.hidden.slice_rows(first, first + n_rows), scratch);
    rank.arena.rewind(mark);
  });
}

}  // namespace hadron
