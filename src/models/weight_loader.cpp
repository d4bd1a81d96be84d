#include "models/weight_loader.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/thread_pool.h"

namespace hadron {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t dim : shape) text += (text.empty() ? "" : ", ") + std::to_string(dim);
  return "[" + text + "]";
}

// Problems found while matching a plan against a checkpoint, reported all at once.
std::vector<std::string> check_plan(const WeightPlan& plan, const Checkpoint& checkpoint) {
  std::vector<std::string> problems;
  std::set<std::string> used;
  for (const WeightSpec& spec : plan.specs()) {
    for (const WeightSource& source : spec.sources) {
      const TensorInfo* info = checkpoint.find(source.name);
      used.insert(source.name);
      if (info == nullptr) {
        if (!spec.optional) problems.push_back("missing tensor " + source.name);
      } else if (info->shape != source.shape) {
        problems.push_back(fmt::format("{} in {}: expected shape {}, found {}", source.name,
                                       info->file, shape_text(source.shape),
                                       shape_text(info->shape)));
      } else if (!is_float(info->dtype)) {
        problems.push_back(fmt::format("{} in {}: dtype {} is not a float type", source.name,
                                       info->file, dtype_name(info->dtype)));
      }
    }
  }
  for (const std::string& name : checkpoint.names())
    if (!used.contains(name) && !plan.unused_allowed(name))
      problems.push_back("unused checkpoint tensor " + name);
  return problems;
}

// Allocates the spec's device tensor, fills a host image with `fill` and uploads it.
template <typename Fill>
void materialise(const WeightSpec& spec, DType dtype, Backend& backend, LoadedWeights& loaded,
                 Fill&& fill) {
  const std::vector<int64_t> shape = spec.shape();
  Buffer device = backend.allocate(spec.numel() * dtype_size(dtype));
  Tensor target = device.view(dtype, shape);
  if (backend.device() == Device::CPU) {
    fill(target.data);
  } else {
    Buffer host = Buffer::host(target.nbytes());
    fill(host.data());
    backend.copy(host.view(dtype, shape), target);
  }
  *spec.target = target;
  loaded.bytes += target.nbytes();
  loaded.buffers.push_back(std::move(device));
}

}  // namespace

LoadedWeights load_weights(const WeightPlan& plan, const Checkpoint& checkpoint,
                           Backend& backend) {
  const std::vector<std::string> problems = check_plan(plan, checkpoint);
  if (!problems.empty()) {
    std::string message = fmt::format("the checkpoint does not match the model ({} problems):",
                                      problems.size());
    for (size_t i = 0; i < problems.size() && i < 20; ++i) message += "\n  " + problems[i];
    if (problems.size() > 20) message += fmt::format("\n  ... and {} more", problems.size() - 20);
    throw InputError(message + "\nhint: is config.json from the same checkpoint?");
  }
  LoadedWeights loaded;
  for (const WeightSpec& spec : plan.specs()) {
    const TensorInfo* first = checkpoint.find(spec.sources[0].name);
    if (first == nullptr) continue;  // optional and absent
    const DType dtype = backend.weight_dtype(first->dtype);
    materialise(spec, dtype, backend, loaded, [&](void* dst) {
      char* cursor = static_cast<char*>(dst);
      for (const WeightSource& source : spec.sources) {
        const TensorInfo* info = checkpoint.find(source.name);
        convert_dtype(info->data, info->dtype, cursor, dtype, info->numel());
        cursor += info->numel() * dtype_size(dtype);
      }
    });
  }
  return loaded;
}

LoadedWeights load_dummy_weights(const WeightPlan& plan, Backend& backend,
                                 DType checkpoint_dtype, uint64_t seed) {
  LoadedWeights loaded;
  uint64_t spec_seed = seed;
  for (const WeightSpec& spec : plan.specs()) {
    const DType dtype = backend.weight_dtype(checkpoint_dtype);
    const std::vector<int64_t> shape = spec.shape();
    const bool is_vector = shape.size() == 1;
    const float scale = is_vector ? 0.1f : 1.0f / std::sqrt(static_cast<float>(shape.back()));
    const float offset = is_vector ? 1.0f : 0.0f;
    spec_seed = spec_seed * 6364136223846793005ull + 1442695040888963407ull;
    materialise(spec, dtype, backend, loaded, [&](void* dst) {
      const int64_t n = spec.numel();
      ThreadPool::global().parallel_for((n + 65535) / 65536, [&](int64_t begin, int64_t end) {
        float values[4096];
        for (int64_t chunk = begin; chunk < end; ++chunk) {
          uint64_t state = spec_seed ^ (chunk * 0x9e3779b97f4a7c15ull);
          for (int64_t i = chunk * 65536; i < std::min(n, (chunk + 1) * 65536); i += 4096) {
            const int64_t count = std::min<int64_t>(4096, n - i);
            for (int64_t j = 0; j < count; ++j) {
              state ^= state << 13, state ^= state >> 7, state ^= state << 17;
              values[j] = offset + scale * (static_cast<float>(state >> 40) / 8388608.0f - 1.0f);
            }
            convert_from_f32(values, static_cast<char*>(dst) + i * dtype_size(dtype), dtype,
                             count);
          }
        }
      });
    });
  }
  return loaded;
}

}  // namespace hadron
