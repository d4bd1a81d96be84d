// Time to first token of a prompt whose long prefix was computed before, when that prefix is
// recomputed, still in the device pool, brought back from the host tier, or read back from the
// disk tier (CPU backend). The device pool holds one sequence, so two unrelated prompts in
// between push the prefix out. Usage:
//   kv_offload_bench [model dir] [prefix tokens] [disk parent dir] [repeats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "engine/generator.h"
#include "engine/loaded_model.h"
#include "kv/offload_record.h"

namespace {

using namespace hadron;

enum class Where { kRecompute, kDevice, kHost, kDisk };

struct Result {
  std::vector<double> ttft;
  OffloadStats stats;
};

std::vector<int32_t> random_tokens(std::mt19937& rng, int n) {
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = 3 + static_cast<int32_t>(rng() % 4000);
  return tokens;
}

double first_token_seconds(LoadedModel& model, const std::vector<int32_t>& prompt) {
  GenerationRequest request{prompt, {}};
  request.params.max_tokens = 1;
  request.params.ignore_eos = true;
  const auto start = std::chrono::steady_clock::now();
  generate(model, {request});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Result run(Where where, const std::string& model_dir, int prefix, const std::string& disk,
           int repeats) {
  EngineOptions options;
  options.model_path = model_dir;
  options.max_model_len = 1024;
  options.block_size = 16;
  options.num_kv_blocks = 64;  // one sequence of 1024 tokens
  options.max_num_batched_tokens = 1024;
  options.verbose = false;
  options.enable_prefix_caching = where != Where::kRecompute;
  if (where == Where::kHost || where == Where::kDisk) {
    size_t slot = 0;  // bytes of one block (all layers) in the host tier
    for (const Tensor& part : LoadedModel::load(options, make_cpu_backend())->kv().block_parts(0))
      slot += part.nbytes();
    slot = round_up_to(slot, kRecordAlign);
    // The disk case's host tier is too small to keep the prefix past two fillers.
    options.offload.host_bytes = (where == Where::kHost ? 256 : 64) * slot;
    if (where == Where::kDisk) {
      const char* io = std::getenv("HADRON_KV_OFFLOAD_IO");  // posix: pread/pwrite
      if (io != nullptr && std::string(io) == "posix") options.offload.io = DiskIoKind::kPosix;
      options.offload.disk_dir = disk;
      options.offload.disk_bytes = size_t{1} << 30;
    }
  }
  auto model = LoadedModel::load(options, make_cpu_backend());
  std::mt19937 rng(7);
  first_token_seconds(*model, random_tokens(rng, 64));  // warm-up
  Result result;
  for (int r = 0; r < repeats; ++r) {
    std::vector<int32_t> prompt = random_tokens(rng, prefix);
    prompt.push_back(1);
    first_token_seconds(*model, prompt);
    if (where != Where::kDevice)
      for (int i = 0; i < 2; ++i) first_token_seconds(*model, random_tokens(rng, 1000));
    prompt.back() = 2;
    result.ttft.push_back(first_token_seconds(*model, prompt));
  }
  if (model->offload()) result.stats = model->offload()->stats();
  return result;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model_dir = argc > 1 ? argv[1] : HADRON_SOURCE_DIR "/models/default";
  const int prefix = argc > 2 ? std::stoi(argv[2]) : 992;
  const std::string disk = argc > 3 ? argv[3] : "/tmp";
  const int repeats = argc > 4 ? std::stoi(argv[4]) : 5;
  const std::pair<const char*, Where> cases[] = {{"recompute", Where::kRecompute},
                                                 {"device hit", Where::kDevice},
                                                 {"host-tier hit", Where::kHost},
                                                 {"disk-tier hit", Where::kDisk}};
  std::printf("prefix of %d tokens, median of %d\n", prefix, repeats);
  const std::string only = argc > 5 ? argv[5] : "";
  for (const auto& [name, where] : cases) {
    if (!only.empty() && only != name) continue;
    const Result r = run(where, model_dir, prefix, disk, repeats);
    std::printf("%-14s TTFT %8.2f ms", name, median(r.ttft) * 1e3);
    if (r.stats.disk.read_seconds > 0)
      std::printf("  disk reads %.1f MB in %.2f ms (%.2f GB/s, %s)", r.stats.disk.read_bytes / 1e6,
                  r.stats.disk.read_seconds * 1e3,
                  r.stats.disk.read_bytes / r.stats.disk.read_seconds / 1e9,
                  r.stats.disk_io.c_str());
    if (r.stats.host.read_seconds > 0)
      std::printf("  host->device %.1f MB in %.2f ms", r.stats.host.read_bytes / 1e6,
                  r.stats.host.read_seconds * 1e3);
    if (r.stats.enabled)
      std::printf("  [hits: host %lld, disk %lld blocks; disk stored %lld, dropped %lld]",
                  static_cast<long long>(r.stats.host.hit_blocks),
                  static_cast<long long>(r.stats.disk.hit_blocks),
                  static_cast<long long>(r.stats.disk.stored_blocks),
                  static_cast<long long>(r.stats.disk.dropped_blocks));
    std::printf("\n");
  }
  return 0;
}
