// hadron inspect: the normalised config, parameter count and weight memory per dtype.
#include <cstdio>
#include <filesystem>

#include "app/command.h"
#include "app/engine_flags.h"
#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "loader/hf_config.h"
#include "loader/safetensors.h"
#include "models/registry.h"

namespace hadron::app {
namespace {

struct InspectArgs {
  std::string model_dir;
  std::string load_format = "auto";
  std::string hf_overrides;
};

std::string gigabytes(double bytes) { return fmt::format("{:.3f} GB", bytes / 1e9); }

// Whether a folder holds *.safetensors files or their index: a config-only folder is a normal
// thing to inspect, so its missing checkpoint is a note, not an error.
bool has_safetensors(const std::filesystem::path& dir) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json")) return true;
  }
  return false;
}

// KV cache values and BF16 bytes one token takes, over all layers.
void print_kv_per_token(const std::vector<KvLayerSpec>& layers) {
  int64_t values = 0;
  for (const KvLayerSpec& layer : layers) values += layer.values_per_token();
  if (layers.empty()) return;
  const KvLayerSpec& first = layers.front();
  std::string per_layer =
      first.is_latent() ? fmt::format("latent {} + rope key {}", first.latent_dim,
                                      first.head_dim - first.latent_dim)
                        : fmt::format("K and V {} heads x {}", first.n_kv_heads, first.head_dim);
  if (first.has_index()) per_layer += fmt::format(" + indexer key {}", first.index_dim);
  std::printf(
      "kv cache per token: %lld values over %zu layers (%s per layer), %lld bytes in BF16\n",
      static_cast<long long>(values), layers.size(), per_layer.c_str(),
      static_cast<long long>(values * 2));
}

// Linear-attention layers keep a state per sequence beside the KV cache.
void print_state_memory(const Model& model, DType conv_dtype) {
  const std::vector<LinearStateSpec> layers = model.state_layers();
  if (layers.empty()) return;
  const LinearStateSpec& layer = layers.front();
  const std::string text = fmt::format(
      "linear-attention state per sequence: {:.2f} MB ({} layers: conv {} [{}, {}], recurrent {} "
      "[{}, {}, {}])",
      KvCache::state_bytes_per_seq(layers, conv_dtype) / 1e6, layers.size(), dtype_name(conv_dtype),
      layer.conv_dim, layer.conv_width, dtype_name(layer.state_dtype), layer.n_heads,
      layer.key_head_dim, layer.value_head_dim);
  std::printf("%s\n", text.c_str());
}

void run_inspect(const InspectArgs& args) {
  const ModelConfig config =
      load_model_config(args.model_dir, parse_hf_overrides(args.hf_overrides));
  std::printf("%s\n", describe(config).c_str());
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  const std::unique_ptr<Model> model = create_model(config, *backend);
  WeightPlan plan;
  model->declare_weights(plan);
  const auto n_params = static_cast<double>(plan.n_params());
  std::printf("parameters: %.0f (%.3f B) in %zu tensors\n", n_params, n_params / 1e9,
              plan.specs().size());
  std::printf("weight memory: F32 %s, BF16/F16 %s, FP8 %s\n", gigabytes(4 * n_params).c_str(),
              gigabytes(2 * n_params).c_str(), gigabytes(n_params).c_str());
  print_kv_per_token(model->kv_layers());
  print_state_memory(*model, backend->activation_dtype());
  if (args.load_format == "dummy") return;
  std::filesystem::path dir = args.model_dir;
  if (!std::filesystem::is_directory(dir)) dir = dir.parent_path();  // DIR/config.json
  if (dir.empty()) dir = ".";
  if (args.load_format == "auto" && !has_safetensors(dir)) {
    std::printf("checkpoint: no safetensors files in %s (config only)\n", dir.c_str());
    return;
  }
  const Checkpoint checkpoint = Checkpoint::open(dir.string());
  double bytes = 0;
  for (const std::string& name : checkpoint.names()) bytes += checkpoint.find(name)->nbytes;
  std::printf("checkpoint: %zu tensors, %s\n", checkpoint.size(), gigabytes(bytes).c_str());
}

void setup_inspect(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* command =
      app.add_subcommand("inspect", "show a model's normalised config and weight memory");
  command->add_option("model", args->model_dir, "model folder or config.json")->required();
  command
      ->add_option("--load-format", args->load_format, "dummy: do not look for safetensors files")
      ->check(CLI::IsMember({"auto", "safetensors", "dummy"}));
  add_hf_overrides_flag(*command, args->hf_overrides);
  command->callback([args] { run_inspect(*args); });
}

}  // namespace

HADRON_COMMAND(setup_inspect);

}  // namespace hadron::app
