// KV offload tiers under the engine (CPU backend, fixture models, a device pool of one
// sequence): a prefix hit served from the host tier or from the disk tier gives exactly the
// output of a miss; under random traffic no block is lost or duplicated; a disk block that was
// corrupted, cut short or deleted is dropped and recomputed while the engine keeps going.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "engine_test_util.h"
#include "kv/offload_disk_io.h"
#include "kv/offload_record.h"

namespace hadron {
namespace {

std::string disk_parent() {
  const std::string dir = ::testing::TempDir() + "hadron-kv-offload-test";
  std::filesystem::create_directories(dir);
  return dir;
}

struct TierSizes {
  int64_t host_blocks = 64;
  int64_t disk_blocks = 0;  // 0: no disk tier
  DiskIoKind io = DiskIoKind::kAuto;
};

// A model whose device pool holds one sequence (12 blocks of 8 tokens), so any other request
// evicts a finished one's cached blocks into the tiers.
std::unique_ptr<LoadedModel> load(const std::string& fixture, std::optional<TierSizes> tiers,
                                  bool prefix_caching = true) {
  EngineOptions options = test_engine_options(fixture, 8, 12, 128);  // whole prompts per step
  options.async_scheduling = false;
  options.enable_prefix_caching = prefix_caching;
  if (tiers) {
    // Bytes per block, from a pool of this layout: slots and records are padded to 4 KiB.
    auto probe = LoadedModel::load(options, make_cpu_backend());
    size_t block_bytes = 0;
    for (const Tensor& part : probe->kv().block_parts(0)) block_bytes += part.nbytes();
    const size_t slot = round_up_to(block_bytes, kRecordAlign);
    options.offload.host_bytes = tiers->host_blocks * slot;
    if (tiers->disk_blocks > 0) {
      options.offload.disk_dir = disk_parent();
      options.offload.disk_bytes = tiers->disk_blocks * (slot + record_header_bytes(8));
    }
    options.offload.io = tiers->io;
  }
  return LoadedModel::load(options, make_cpu_backend());
}

// Runs `shared + {7}` once, then two long unrelated prompts that push its blocks out of the
// device pool (into the tiers, if any), then returns the output of `shared + {9}`.
std::vector<int32_t> hit_after_eviction(LoadedModel& model, const std::vector<int32_t>& shared,
                                        GenerationStats* stats = nullptr) {
  std::mt19937 rng(5);
  auto with = [&](int32_t last) {
    std::vector<int32_t> prompt = shared;
    prompt.push_back(last);
    return greedy(prompt, 8);
  };
  generate(model, {with(7)});
  generate(model, {greedy(random_tokens(rng, 80), 4)});
  generate(model, {greedy(random_tokens(rng, 80), 4)});
  return generate(model, {with(9)}, nullptr, stats)[0].completions[0];
}

std::vector<int32_t> miss(const std::string& fixture, const std::vector<int32_t>& shared) {
  auto model = load(fixture, std::nullopt, /*prefix_caching=*/false);
  std::vector<int32_t> prompt = shared;
  prompt.push_back(9);
  return generate(*model, {greedy(prompt, 8)})[0].completions[0];
}

class KvOffloadHit : public ::testing::TestWithParam<const char*> {};

// Dense GQA and a latent cache with indexer keys (deepseek-v3.2): every part of a block moves.
TEST_P(KvOffloadHit, FromHostTierEqualsMiss) {
  std::mt19937 rng(11);
  const std::vector<int32_t> shared = random_tokens(rng, 40);
  const auto expected = miss(GetParam(), shared);
  auto model = load(GetParam(), TierSizes{});
  GenerationStats stats;
  EXPECT_EQ(hit_after_eviction(*model, shared, &stats), expected);
  EXPECT_GE(stats.engine.offload.host.hit_blocks, 5);  // the 40 shared tokens
  EXPECT_GE(stats.engine.prefix_hit_tokens, 40);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

TEST_P(KvOffloadHit, WithoutTiersTheSameTrafficMisses) {
  std::mt19937 rng(11);
  const std::vector<int32_t> shared = random_tokens(rng, 40);
  auto model = load(GetParam(), std::nullopt);
  GenerationStats stats;
  EXPECT_EQ(hit_after_eviction(*model, shared, &stats), miss(GetParam(), shared));
  EXPECT_EQ(stats.engine.prefix_hit_tokens, 0);  // the eviction is real
  EXPECT_FALSE(stats.engine.offload.enabled);
}

INSTANTIATE_TEST_SUITE_P(Models, KvOffloadHit, ::testing::Values("qwen3-gqa4", "deepseek-v3.2"),
                         [](const auto& info) {
                           std::string id = info.param;
                           for (char& c : id)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return id;
                         });

// Preemption releases a sequence's blocks, full ones cached: with the tiers they come back
// from host memory on resumption instead of being recomputed, and outputs stay the same.
TEST(KvOffloadPreemption, ResumedSequencesReloadInsteadOfRecomputing) {
  std::mt19937 rng(17);
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 4; ++i) batch.push_back(greedy(random_tokens(rng, 30 + 6 * i), 24));
  auto reference = load("qwen3-gqa4", std::nullopt, /*prefix_caching=*/false);
  const auto expected = generate(*reference, batch);
  GenerationStats without, with;
  auto plain = load("qwen3-gqa4", std::nullopt);
  const auto plain_results = generate(*plain, batch, nullptr, &without);
  auto offloaded = load("qwen3-gqa4", TierSizes{});
  const auto results = generate(*offloaded, batch, nullptr, &with);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(plain_results[i].completions, expected[i].completions) << i;
    EXPECT_EQ(results[i].completions, expected[i].completions) << i;
  }
  EXPECT_GT(with.engine.n_preemptions, 0);
  EXPECT_GT(with.engine.offload.host.hit_blocks, 0);
  EXPECT_LT(with.engine.n_recomputed_tokens, without.engine.n_recomputed_tokens);
}

// Linear-attention state lives per sequence, not in blocks: such models get no tiers (a
// prefix brought back without its state would be wrong), even if they cache prefixes.
TEST(KvOffloadHybrid, ModelsWithLinearStateGetNoTiers) {
  EngineOptions options = test_engine_options("qwen3-next", 8, 0, 64);
  options.offload.host_bytes = size_t{1} << 22;
  auto model = LoadedModel::load(options, make_cpu_backend());
  EXPECT_EQ(model->offload(), nullptr);
  std::mt19937 rng(3);
  EXPECT_EQ(generate(*model, {greedy(random_tokens(rng, 20), 3)})[0].completions[0].size(), 3u);
}

class KvOffloadDisk : public ::testing::TestWithParam<DiskIoKind> {};

std::vector<std::filesystem::path> block_files(LoadedModel& model) {
  std::vector<std::filesystem::path> files;
  for (const auto& file : std::filesystem::directory_iterator(model.offload()->disk()->folder()))
    files.push_back(file.path());
  return files;
}

TEST_P(KvOffloadDisk, HitFromDiskEqualsMiss) {
  std::mt19937 rng(12);
  const std::vector<int32_t> shared = random_tokens(rng, 40);
  auto model = load("qwen3-gqa4", TierSizes{2, 64, GetParam()});
  // kAuto takes io_uring wherever the kernel allows it (containers may not).
  EXPECT_STREQ(
      model->offload()->disk()->io_name(),
      GetParam() == DiskIoKind::kAuto && io_uring_available() ? "io_uring" : "pread/pwrite");
  GenerationStats stats;
  EXPECT_EQ(hit_after_eviction(*model, shared, &stats), miss("qwen3-gqa4", shared));
  // All 5 shared blocks come back (the eviction batch of 12 blocks passed through a host tier
  // of 2 on its way to disk), at most 2 of them from the host tier.
  EXPECT_GE(stats.engine.prefix_hit_tokens, 40);
  EXPECT_GE(stats.engine.offload.disk.hit_blocks, 3);
  EXPECT_EQ(stats.engine.offload.disk.dropped_blocks, 0);
  // Private files: a 0700 folder of 0600 files, one per block the tier holds.
  const std::string folder = model->offload()->disk()->folder();
  struct stat info {};
  ASSERT_EQ(stat(folder.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  const auto files = block_files(*model);
  EXPECT_EQ(static_cast<int64_t>(files.size()), model->offload()->stats().disk.blocks);
  for (const auto& file : files) {
    ASSERT_EQ(stat(file.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u) << file;
  }
  model.reset();  // a clean exit removes the folder and its files
  EXPECT_FALSE(std::filesystem::exists(folder));
}

enum class Fault { kFlipByte, kTruncate, kDelete, kForeignHeader };

// Damages every block file, then asks for the prefix again: each damaged block is dropped,
// recomputed, and the output is the miss's.
void expect_fault_recomputed(DiskIoKind io, Fault fault) {
  std::mt19937 rng(13);
  const std::vector<int32_t> shared = random_tokens(rng, 40);
  auto model = load("qwen3-gqa4", TierSizes{1, 64, io});
  std::vector<int32_t> prompt = shared;
  prompt.push_back(7);
  generate(*model, {greedy(prompt, 8)});
  generate(*model, {greedy(random_tokens(rng, 80), 4)});
  generate(*model, {greedy(random_tokens(rng, 80), 4)});
  const auto files = block_files(*model);
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    const auto size = std::filesystem::file_size(file);
    switch (fault) {
      case Fault::kFlipByte: {  // one byte of the payload, past the header
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(static_cast<std::streamoff>(size - kRecordAlign / 2 - 3));
        const char c = static_cast<char>(f.get());
        f.seekp(static_cast<std::streamoff>(size - kRecordAlign / 2 - 3));
        f.put(static_cast<char>(c ^ 0x10));
        break;
      }
      case Fault::kTruncate:
        std::filesystem::resize_file(file, size - kRecordAlign);
        break;
      case Fault::kDelete:
        std::filesystem::remove(file);
        break;
      case Fault::kForeignHeader: {  // the key field of another block
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(offsetof(RecordHeader, key)));
        f.put('\x5a');
        break;
      }
    }
  }
  GenerationStats stats;
  prompt.back() = 9;
  const auto output = generate(*model, {greedy(prompt, 8)}, nullptr, &stats)[0].completions[0];
  EXPECT_EQ(output, miss("qwen3-gqa4", shared));
  EXPECT_EQ(stats.engine.offload.disk.hit_blocks, 0);
  EXPECT_GE(stats.engine.offload.disk.dropped_blocks, 1);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
  // The engine keeps serving, and the recomputed prefix is cached again.
  prompt.back() = 11;
  generate(*model, {greedy(prompt, 4)}, nullptr, &stats);
  EXPECT_GE(stats.engine.prefix_hit_tokens, 40);
}

TEST_P(KvOffloadDisk, FlippedByteIsDroppedAndRecomputed) {
  expect_fault_recomputed(GetParam(), Fault::kFlipByte);
}
TEST_P(KvOffloadDisk, TruncatedFileIsDroppedAndRecomputed) {
  expect_fault_recomputed(GetParam(), Fault::kTruncate);
}
TEST_P(KvOffloadDisk, DeletedFileIsDroppedAndRecomputed) {
  expect_fault_recomputed(GetParam(), Fault::kDelete);
}
TEST_P(KvOffloadDisk, ForeignHeaderIsDroppedAndRecomputed) {
  expect_fault_recomputed(GetParam(), Fault::kForeignHeader);
}

// Random add / step / abort over prompts sharing three prefixes, with a device pool of 12
// blocks, a host tier of 3 and a disk tier of 20: blocks move down and back all the time.
// Every completion equals the same request's on a model without a prefix cache; the tiers never
// hold more than their capacity, the disk folder holds exactly the tier's blocks, and every
// device block is free at the end.
TEST_P(KvOffloadDisk, RandomTrafficKeepsOutputsAndLosesNoBlock) {
  std::mt19937 rng(21);
  std::vector<std::vector<int32_t>> prefixes;
  for (int i = 0; i < 3; ++i) prefixes.push_back(random_tokens(rng, 24 + 8 * i));
  auto reference = load("qwen3-gqa4", std::nullopt, /*prefix_caching=*/false);
  auto model = load("qwen3-gqa4", TierSizes{3, 20, GetParam()});
  Engine engine(*model, nullptr);
  SharedPrefixTraffic traffic{engine, *reference, prefixes, 10, 6};
  auto check_tiers = [&] {
    const OffloadStats s = model->offload()->stats();
    ASSERT_LE(s.host.blocks, s.host.capacity_blocks);
    ASSERT_LE(s.disk.blocks, s.disk.capacity_blocks);
    ASSERT_EQ(static_cast<int64_t>(block_files(*model).size()), s.disk.blocks);
  };
  for (int round = 0; round < 160 || !traffic.live.empty(); ++round) {
    const int action = round < 160 ? static_cast<int>(rng() % 5) : 4;
    // At most 6 requests in flight: a seventh add steps instead.
    traffic.round(rng, action <= 1 && traffic.live.size() >= 6 ? 4 : action);
    check_tiers();
  }
  const OffloadStats s = model->offload()->stats();
  EXPECT_GT(traffic.n_checked, 20);
  EXPECT_GT(s.host.hit_blocks, 0);
  EXPECT_GT(s.disk.hit_blocks, 0);
  EXPECT_EQ(s.disk.dropped_blocks, 0);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

// A disk that refuses writes (RLIMIT_FSIZE below a record: short writes, EFBIG, as when it is
// full) while the prefix is spilled: nothing half-written is kept or served, the prefix is
// recomputed, and the engine goes on.
TEST_P(KvOffloadDisk, RefusedWritesAreNotServed) {
  std::mt19937 rng(14);
  const std::vector<int32_t> shared = random_tokens(rng, 40);
  auto model = load("qwen3-gqa4", TierSizes{1, 64, GetParam()});
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = kRecordAlign;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  GenerationStats stats;
  const auto output = hit_after_eviction(*model, shared, &stats);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(output, miss("qwen3-gqa4", shared));
  EXPECT_GE(stats.engine.offload.disk.dropped_blocks, 5);
  EXPECT_EQ(stats.engine.offload.disk.blocks, 0);
  EXPECT_TRUE(block_files(*model).empty());
  EXPECT_EQ(stats.engine.offload.disk.hit_blocks, 0);
  EXPECT_EQ(model->blocks().n_free(), model->blocks().n_blocks());
}

INSTANTIATE_TEST_SUITE_P(Io, KvOffloadDisk,
                         ::testing::Values(DiskIoKind::kAuto, DiskIoKind::kPosix),
                         [](const auto& info) {
                           return info.param == DiskIoKind::kPosix ? "pread" : "io_uring";
                         });

}  // namespace
}  // namespace hadron
