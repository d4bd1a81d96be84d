#include "app/engine_flags.h"

#include <dlfcn.h>

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
  command.add_option("--seed", options.seed, "seed for dummy weights and sampling");
  add_hf_overrides_flag(command, options.hf_overrides);
  command.add_flag("--enforce-eager", options.enforce_eager,
                   "no CUDA graphs: launch every decode step's kernels one by one");
  command.add_flag_callback(
      "--no-async-scheduling", [&options] { options.async_scheduling = false; },
      "wait for each step's tokens before scheduling the next (GPU)");
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
  parse_hf_overrides(options.hf_overrides);  // bad JSON is an error before anything loads
}

std::unique_ptr<LoadedModel> load_model(const EngineOptions& options) {
  return LoadedModel::load(options, make_backend(options.device));
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
