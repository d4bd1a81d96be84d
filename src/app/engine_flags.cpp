#include "app/engine_flags.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "backends/backend_factory.h"
#include "core/error.h"
#include "loader/hf_config.h"

namespace hadron::app {

namespace {

// models/default in `start` or a folder above it, if any.
std::optional<std::filesystem::path> find_default_model(std::filesystem::path start) {
  for (auto dir = start; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "models/default/config.json")) return dir / "models/default";
  }
  return std::nullopt;
}

}  // namespace

std::string default_model_dir() {
  // Next to the executable's build tree first (build/hadron -> models/default), then next to
  // the file holding this code (build/libhadron.so, when a program embeds the library), then
  // the cwd.
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error)
    if (auto found = find_default_model(exe.parent_path())) return found->string();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&default_model_dir), &info) != 0 && info.dli_fname != nullptr)
    if (auto found =
            find_default_model(std::filesystem::absolute(info.dli_fname, error).parent_path()))
      return found->string();
  return "models/default";
}

void add_engine_flags(CLI::App& command, EngineOptions& options, std::string& load_format) {
  options.model_path = default_model_dir();
  command.add_option("--model,-m", options.model_path,
                     "model folder (config.json + safetensors); default: models/default");
  command.add_option("--load-format", load_format, "auto (safetensors) or dummy (random weights)")
      ->check(CLI::IsMember({"auto", "safetensors", "dummy"}));
  command
      .add_option_function<std::string>(
          "--quantization",
          [&options](const std::string& method) { options.quantize_fp8 = method == "fp8"; },
          "fp8: keep linear weights in FP8, quantizing bf16 ones per output channel at load "
          "(activations per token, dynamically), as vLLM's --quantization fp8")
      ->check(CLI::IsMember({"fp8"}));
  command
      .add_option_function<std::string>(
          "--kv-cache-dtype",
          [&options](const std::string& dtype) { options.kv_cache_fp8 = dtype != "auto"; },
          "auto (the activations' dtype) or fp8 / fp8_e4m3: e4m3 KV cache at scale 1 (CPU)")
      ->check(CLI::IsMember({"auto", "fp8", "fp8_e4m3"}));
  command.add_option("--device", options.device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  command.add_option("--max-model-len", options.max_model_len, "context length (tokens)");
  command.add_option("--max-num-seqs", options.max_num_seqs, "sequences in flight at once");
  command.add_option("--max-num-batched-tokens", options.max_num_batched_tokens,
                     "tokens per step (prefill chunk size)");
  command.add_option("--kv-reserve-per-seq", options.kv_reserve_per_seq,
                     "admit a waiting request only while this many tokens of free KV cache per "
                     "running request remain (fewer preemptions with long outputs; default 0)");
  command.add_option("--block-size", options.block_size, "tokens per KV-cache block");
  command.add_option("--gpu-memory-utilization", options.gpu_memory_utilization,
                     "fraction of GPU memory hadron may use");
  command.add_option("--kv-cache-memory-bytes", options.kv_cache_memory_bytes,
                     "bytes of KV cache (default: on a GPU, what --gpu-memory-utilization "
                     "leaves; on the CPU, --max-num-seqs sequences of --max-model-len tokens "
                     "within 64 MB, and at least one)");
  command
      .add_option("--state-snapshot-fraction", options.state_snapshot_fraction,
                  "hybrid (gated DeltaNet) models: fraction of the KV-cache budget kept for "
                  "linear-attention state snapshots, which prefix caching needs (0: off)")
      ->check(CLI::Range(0.0, 0.9));
  command.add_option("--num-state-snapshots", options.num_state_snapshots,
                     "hybrid models: state snapshots to keep (overrides the fraction)");
  command.add_option("--seed", options.seed, "seed for dummy weights and sampling");
  add_kv_offload_flags(command, options.offload);
  command.add_option("--tensor-parallel-size", options.tensor_parallel_size,
                     "ranks to shard the model over (with --device cpu: threads of this "
                     "process, each with its own CPU backend)");
  command.add_flag("--enable-expert-parallel", options.enable_expert_parallel,
                   "with --tensor-parallel-size: place whole MoE experts on the ranks instead of "
                   "a part of every expert on each");
  add_hf_overrides_flag(command, options.hf_overrides);
  command.add_flag("--enforce-eager", options.enforce_eager,
                   "no CUDA graphs: launch every decode step's kernels one by one");
  command.add_flag_callback(
      "--no-async-scheduling", [&options] { options.async_scheduling = false; },
      "wait for each step's tokens before scheduling the next (GPU)");
}

void add_kv_offload_flags(CLI::App& command, OffloadOptions& offload) {
  command
      .add_option_function<double>(
          "--kv-offloading-size",
          [&offload](double gib) { offload.host_bytes = static_cast<size_t>(gib * (1ull << 30)); },
          "GiB of host memory (pinned on a GPU) keeping prefix-cache blocks evicted from the "
          "device KV cache (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option_function<std::string>(
          "--kv-offloading-backend", [](const std::string&) {},
          "how KV blocks are offloaded: native (hadron's own tiers, the only one)")
      ->check(CLI::IsMember({"native"}));
  command.add_option("--kv-offload-disk-dir", offload.disk_dir,
                     "folder for a disk tier below the host tier (hadron makes a private "
                     "subfolder there and removes it on exit)");
  command
      .add_option_function<double>(
          "--kv-offload-disk-gb",
          [&offload](double gb) { offload.disk_bytes = static_cast<size_t>(gb * 1e9); },
          "GB of disk the disk tier may fill (with --kv-offload-disk-dir)")
      ->check(CLI::NonNegativeNumber);
}

void add_speculative_flag(CLI::App& command, EngineOptions& options) {
  command.add_option_function<std::string>(
      "--speculative-config",
      [&options](const std::string& json) { options.speculative = parse_speculative_config(json); },
      "speculative decoding, a JSON object with vLLM's fields, e.g. '{\"method\": \"ngram\", "
      "\"num_speculative_tokens\": 3}' (also prompt_lookup_min/max, default 2/5, and "
      "disable_by_batch_size, default 16); methods: ngram (mtp, eagle3 not yet)");
}

void add_hf_overrides_flag(CLI::App& command, std::string& hf_overrides) {
  command.add_option("--hf-overrides", hf_overrides,
                     "JSON object merged into config.json before it is read (as vLLM's), e.g. "
                     "'{\"num_hidden_layers\": 2}'; nested objects merge, and keys of a nested "
                     "text_config go there");
}

void finish_engine_options(EngineOptions& options, const std::string& load_format) {
  std::error_code error;
  if (!std::filesystem::exists(options.model_path, error))
    input_error("--model {}: no such file or folder (a model folder holds config.json and weights)",
                options.model_path);
  options.dummy_weights = load_format == "dummy";
  if (options.max_num_seqs < 1) input_error("--max-num-seqs must be at least 1");
  if (options.max_num_batched_tokens < 1) input_error("--max-num-batched-tokens must be >= 1");
  if (options.block_size < 1 || options.block_size > 1024)
    input_error("--block-size must be in [1, 1024]");
  if (options.gpu_memory_utilization <= 0 || options.gpu_memory_utilization > 1)
    input_error("--gpu-memory-utilization must be in (0, 1]");
  if (options.max_model_len < 0) input_error("--max-model-len must be positive");
  if (options.kv_reserve_per_seq < 0) input_error("--kv-reserve-per-seq must be >= 0");
  const OffloadOptions& offload = options.offload;
  if (offload.host_bytes == 0 && (offload.disk_bytes > 0 || !offload.disk_dir.empty()))
    input_error(
        "the disk tier (--kv-offload-disk-dir, --kv-offload-disk-gb) needs a host tier "
        "above it: set --kv-offloading-size");
  if (offload.disk_dir.empty() != (offload.disk_bytes == 0))
    input_error("--kv-offload-disk-dir and --kv-offload-disk-gb (> 0) go together");
  if (const char* io = std::getenv("HADRON_KV_OFFLOAD_IO"); io != nullptr)
    options.offload.io = std::string(io) == "posix" ? DiskIoKind::kPosix : DiskIoKind::kAuto;
  if (options.tensor_parallel_size < 1 || options.tensor_parallel_size > 64)
    input_error("--tensor-parallel-size must be in [1, 64]");
  parse_hf_overrides(options.hf_overrides);  // bad JSON is an error before anything loads
}

std::unique_ptr<LoadedModel> load_model(const EngineOptions& options) {
  std::vector<std::unique_ptr<Backend>> backends;  // one per tensor-parallel rank
  for (int rank = 0; rank < options.tensor_parallel_size; ++rank)
    backends.push_back(make_backend(options.device));
  return LoadedModel::load(options, std::move(backends));
}

std::vector<int32_t> parse_token_ids(const std::string& text, const std::string& what) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || value < 0 || value > INT32_MAX)
      input_error("{}: '{}' is not a token id", what, word);
    ids.push_back(static_cast<int32_t>(value));
  }
  if (ids.empty()) input_error("{}: no token ids", what);
  return ids;
}

}  // namespace hadron::app
