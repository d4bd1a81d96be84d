#include "engine/kv_offload_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "kv/offload_record.h"

namespace hadron {
namespace {

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Names, sizes and modification times of the weight files (not their bytes: too slow).
std::string weight_files(const std::filesystem::path& folder) {
  std::error_code error;
  std::vector<std::string> lines;
  for (const auto& file : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = file.path().filename().string();
    if (!name.ends_with(".safetensors") && !name.ends_with(".gguf")) continue;
    const auto size = file.file_size(error);
    const auto time = file.last_write_time(error).time_since_epoch().count();
    lines.push_back(fmt::format("{} {} {}", name, size, time));
  }
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace

uint64_t kv_offload_fingerprint(const EngineOptions& options, const Backend& backend,
                                const KvCache& kv, const ModelConfig& config) {
  const std::filesystem::path model(options.model_path);
  const std::filesystem::path config_file =
      std::filesystem::path(options.config_path.empty() ? options.model_path
                                                        : options.config_path) /
      "config.json";
  std::string text = fmt::format("hadron kv v1\n{}\n{}\n{}\n{}\n", config.architecture,
                                 std::filesystem::absolute(model).string(), file_text(config_file),
                                 options.hf_overrides);
  text +=
      options.dummy_weights ? fmt::format("dummy seed {}\n", options.seed) : weight_files(model);
  text += fmt::format("{} block {}\n", backend.name(), kv.block_size());
  for (const Tensor& part : kv.block_parts(0)) text += part.describe() + "\n";
  return offload_checksum(std::as_bytes(std::span(text)));
}

std::unique_ptr<KvOffload> make_kv_offload(const EngineOptions& options, Backend& backend,
                                           const KvCache& kv, const ModelConfig& config,
                                           bool prefix_caching, bool linear_state) {
  if (!options.offload.enabled()) return nullptr;
  if (!prefix_caching || linear_state || options.tensor_parallel_size > 1) {
    if (options.verbose)
      std::fprintf(stderr, "KV offloading is off: %s\n",
                   linear_state ? "the model keeps linear-attention state, which is not offloaded"
                   : options.tensor_parallel_size > 1
                       ? "ranks above 0 keep KV pools of their own, which it does not copy yet"
                       : "it keeps prefix-cache blocks, and prefix caching is off");
    return nullptr;
  }
  auto offload = std::make_unique<KvOffload>(backend, kv, options.offload,
                                             kv_offload_fingerprint(options, backend, kv, config));
  if (options.verbose) {
    const OffloadStats stats = offload->stats();
    std::fprintf(stderr, "KV offload: host tier of %lld blocks (%.2f GB)",
                 static_cast<long long>(stats.host.capacity_blocks),
                 stats.host.capacity_blocks * offload->host().slot_bytes() / 1e9);
    if (DiskTier* disk = offload->disk())
      std::fprintf(stderr, ", disk tier of %lld blocks in %s (%s%s)",
                   static_cast<long long>(stats.disk.capacity_blocks), disk->folder().c_str(),
                   disk->io_name(), disk->direct_io() ? ", O_DIRECT" : "");
    std::fprintf(stderr, "\n");
  }
  return offload;
}

}  // namespace hadron
