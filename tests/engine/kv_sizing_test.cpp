// The CPU's KV pool is sized from what --max-num-seqs and --max-model-len ask for, within
// kCpuKvCacheBytes unless --kv-cache-memory-bytes asks for more.
#include <gtest/gtest.h>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "engine/loaded_model.h"

namespace hadron {
namespace {

const std::string kDefaultModel = std::string(HADRON_SOURCE_DIR) + "/models/default";

std::unique_ptr<LoadedModel> load_default_model(EngineOptions options) {
  options.model_path = kDefaultModel;
  options.verbose = false;
  return LoadedModel::load(options, make_cpu_backend());
}

int64_t tokens_held(LoadedModel& model) {
  return model.blocks().n_blocks() * model.blocks().block_size();
}

// A run with no flags: the shipped model's pool (it was 2.15 GB, 256 full-length sequences)
// stays within 64 MB and still holds several full contexts.
TEST(CpuKvSizing, DefaultModelWithDefaultFlagsFitsIn64MB) {
  const auto model = load_default_model({});
  EXPECT_LE(model->kv().bytes(), size_t{64'000'000});
  EXPECT_GE(tokens_held(*model), 4 * model->max_model_len());
}

TEST(CpuKvSizing, FewSequencesGetExactlyWhatTheyNeed) {
  EngineOptions options;
  options.max_num_seqs = 2;
  options.max_model_len = 512;
  const auto model = load_default_model(options);
  EXPECT_EQ(tokens_held(*model), 2 * 512);
}

TEST(CpuKvSizing, KvCacheMemoryBytesAsksForMore) {
  EngineOptions options;
  options.kv_cache_memory_bytes = 128'000'000;
  const auto model = load_default_model(options);
  EXPECT_GT(model->kv().bytes(), size_t{64'000'000});
  EXPECT_LE(model->kv().bytes(), size_t{128'000'000});
}

// One sequence of max_model_len is the floor, however large a block is.
TEST(CpuKvSizing, AlwaysOneWholeSequence) {
  const size_t block_bytes = size_t{1} << 20;
  EXPECT_EQ(cpu_kv_blocks(256, 100, block_bytes), 100);
  EXPECT_EQ(cpu_kv_blocks(256, 10, block_bytes),
            static_cast<int64_t>(kCpuKvCacheBytes / block_bytes));
  EXPECT_EQ(cpu_kv_blocks(3, 10, block_bytes), 30);
}

}  // namespace
}  // namespace hadron
