#include "engine/loaded_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "loader/safetensors.h"
#include "models/registry.h"

namespace hadron {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& device) {
  if (device == "cpu" || device == "auto") return make_cpu_backend();
  input_error("device '{}' is not available in this build (use cpu)", device);
}

std::unique_ptr<LoadedModel> LoadedModel::load(const EngineOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<LoadedModel> loaded(new LoadedModel());
  loaded->options_ = options;
  const ModelConfig config = load_model_config(
      options.config_path.empty() ? options.model_path : options.config_path);
  loaded->backend_ = make_backend(options.device);
  Backend& backend = *loaded->backend_;
  loaded->model_ = create_model(config, backend);
  WeightPlan plan;
  loaded->model_->declare_weights(plan);
  if (options.dummy_weights) {
    loaded->weights_ = load_dummy_weights(plan, backend, config.dtype, options.seed);
  } else {
    const Checkpoint checkpoint = Checkpoint::open(options.model_path);
    loaded->weights_ = load_weights(plan, checkpoint, backend);
  }
  const int64_t config_len = config.max_position_embeddings > 0
                                 ? config.max_position_embeddings
                                 : kDefaultMaxModelLen;
  loaded->max_model_len_ =
      options.max_model_len > 0 ? options.max_model_len : std::min(config_len, kDefaultMaxModelLen);
  loaded->model_->prepare(loaded->max_model_len_);
  const int64_t blocks_per_seq =
      (loaded->max_model_len_ + options.block_size - 1) / options.block_size;
  const int64_t n_blocks =
      options.num_kv_blocks > 0 ? options.num_kv_blocks : blocks_per_seq * options.max_num_seqs;
  if (n_blocks < blocks_per_seq)
    input_error("{} KV blocks of {} tokens cannot hold one sequence of --max-model-len {}",
                n_blocks, options.block_size, loaded->max_model_len_);
  loaded->kv_ = std::make_unique<KvCache>(backend, loaded->model_->kv_layers(), n_blocks,
                                          options.block_size, backend.activation_dtype());
  loaded->blocks_ = std::make_unique<BlockManager>(n_blocks, options.block_size,
                                                     options.enable_prefix_caching);
  loaded->runner_ = std::make_unique<ModelRunner>(backend, *loaded->model_, *loaded->kv_,
                                                  options.max_num_batched_tokens);
  if (options.verbose)
    std::fprintf(stderr,
                 "loaded %s on %s: %.2f GB of weights%s, KV cache %lld blocks of %lld tokens "
                 "(%.2f GB), in %.2f s\n",
                 config.architecture.c_str(), backend.name().c_str(),
                 loaded->weights_.bytes / 1e9, options.dummy_weights ? " (dummy)" : "",
                 static_cast<long long>(n_blocks), static_cast<long long>(options.block_size),
                 loaded->kv_->bytes() / 1e9, seconds_since(start));
  return loaded;
}

}  // namespace hadron
