#include "models/weight_loader.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "loader/fp8_weights.h"
#include "models/weight_sources.h"

namespace hadron {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t dim : shape) text += (text.empty() ? "" : ", ") + std::to_string(dim);
  return "[" + text + "]";
}

// Problems found while matching a plan against a checkpoint, reported all at once.
std::vector<std::string> check_plan(const WeightPlan& plan, const Checkpoint& checkpoint,
                                    const QuantConfig& quant) {
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
      } else if (spec.raw ? info->dtype != DType::U8 : !is_float(info->dtype)) {
        problems.push_back(fmt::format("{} in {}: dtype {} is not {}", source.name, info->file,
                                       dtype_name(info->dtype), spec.raw ? "U8" : "a float type"));
      } else if (std::string fp8 = fp8_problem(checkpoint, *info, quant); !fp8.empty()) {
        problems.push_back(std::move(fp8));
      } else if (spec.transposed && find_fp8_scale(checkpoint, *info) != nullptr) {
        problems.push_back(
            fmt::format("{} in {}: FP8 in the transposed (in, out) layout is not "
                        "supported",
                        source.name, info->file));
      }
      if (info != nullptr && find_fp8_scale(checkpoint, *info) != nullptr)
        for (std::string& name : fp8_companion_names(source.name)) used.insert(std::move(name));
    }
  }
  for (const std::string& name : checkpoint.names())
    if (!used.contains(name) && !plan.unused_allowed(name))
      problems.push_back("unused checkpoint tensor " + name);
  return problems;
}

// Writes elements [begin, end) of spec `spec_idx`, in the target dtype, to dst.
using FillRange = std::function<void(size_t spec_idx, int64_t begin, int64_t end, void* dst)>;

// Elements per upload chunk: 32 MiB of bf16, a multiple of the dummy generator's 65536.
constexpr int64_t kChunkElements = int64_t{1} << 24;

// Bytes done out of a total, drawn on stderr: a bar redrawn in place on a terminal, else a
// line at every quarter.
class Progress {
 public:
  Progress(size_t total_bytes, bool enabled)
      : total_(total_bytes),
        enabled_(enabled && total_bytes > 0),
        terminal_(isatty(fileno(stderr)) != 0),
        start_(std::chrono::steady_clock::now()) {}

  void add(size_t bytes) {
    if (!enabled_) return;
    const size_t done = done_.fetch_add(bytes) + bytes;
    const int steps = terminal_ ? 50 : 4;
    const int step = static_cast<int>(done * steps / total_);
    int shown = shown_.load();
    while (step > shown)
      if (shown_.compare_exchange_weak(shown, step)) return draw(done, step, steps);
  }

 private:
  void draw(size_t done, int step, int steps) {
    const std::lock_guard lock(mutex_);
    const std::string amount = load_progress_amount(done, total_, seconds_since(start_));
    if (terminal_) {
      std::fprintf(stderr, "\rloading weights [%-50s] %3d%% %s%s", std::string(step, '#').c_str(),
                   step * 2, amount.c_str(), step == steps ? "\n" : "");
    } else {
      std::fprintf(stderr, "loading weights: %d%% (%s)\n", step * 100 / steps, amount.c_str());
    }
  }

  size_t total_;
  bool enabled_, terminal_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<size_t> done_{0};
  std::atomic<int> shown_{0};
  std::mutex mutex_;
};

// The byte dummy weights give packed integer tensors (WeightSpec::raw).
constexpr uint8_t kDummyRawByte = 0x77;

struct Chunk {
  size_t spec_idx;
  int64_t begin, end;  // elements
};

// Fills `chunks` on the calling thread: in place on the CPU, else through two pinned staging
// buffers of this thread's own, whose copies to the device overlap the next conversion.
void fill_chunks(std::span<const Chunk> chunks, const WeightPlan& plan, Backend& backend,
                 const FillRange& fill, Progress& progress) {
  Buffer staging[2];
  std::unique_ptr<DeviceEvent> copied[2];
  for (size_t c = 0; c < chunks.size(); ++c) {
    const Chunk& chunk = chunks[c];
    const Tensor& target = *plan.specs()[chunk.spec_idx].target;
    const size_t element_bytes = dtype_size(target.dtype);
    const int64_t n = chunk.end - chunk.begin;
    char* dst = static_cast<char*>(target.data) + chunk.begin * element_bytes;
    if (backend.device() == Device::CPU) {
      fill(chunk.spec_idx, chunk.begin, chunk.end, dst);
    } else {
      const size_t slot = c % 2;
      if (copied[slot]) copied[slot]->wait();
      if (!staging[slot].data())
        staging[slot] = backend.allocate_host(kChunkElements * sizeof(float));
      fill(chunk.spec_idx, chunk.begin, chunk.end, staging[slot].data());
      const auto bytes = static_cast<int64_t>(n * element_bytes);
      backend.copy_async(staging[slot].view(DType::U8, {bytes}),
                         Tensor::view_of(dst, DType::U8, {bytes}, target.device));
      copied[slot] = backend.record_event();
    }
    progress.add(n * element_bytes);
  }
  for (auto& event : copied)
    if (event) event->wait();
}

// Allocates every spec's tensor in its dtype (nullopt: skipped) and fills it through `fill`
// in chunks on the thread pool.
LoadedWeights materialise(const WeightPlan& plan, const std::vector<std::optional<DType>>& dtypes,
                          Backend& backend, bool show_progress, const FillRange& fill) {
  size_t needed = 0;
  for (size_t i = 0; i < plan.specs().size(); ++i)
    if (dtypes[i]) needed += plan.specs()[i].numel() * dtype_size(*dtypes[i]);
  const std::optional<DeviceMemory> memory = backend.memory();
  check_weights_fit(needed, memory ? std::optional(memory->free_bytes) : std::nullopt,
                    backend.name());
  LoadedWeights loaded;
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < plan.specs().size(); ++i) {
    if (!dtypes[i]) continue;
    const WeightSpec& spec = plan.specs()[i];
    Buffer device = backend.allocate(spec.numel() * dtype_size(*dtypes[i]));
    *spec.target = device.view(*dtypes[i], spec.shape());
    loaded.bytes += spec.target->nbytes();
    loaded.buffers.push_back(std::move(device));
    for (int64_t begin = 0; begin < spec.numel(); begin += kChunkElements)
      chunks.push_back({i, begin, std::min(spec.numel(), begin + kChunkElements)});
  }
  Progress progress(loaded.bytes, show_progress);
  ThreadPool::global().parallel_for(
      static_cast<int64_t>(chunks.size()), [&](int64_t first, int64_t last) {
        fill_chunks(std::span(chunks).subspan(first, last - first), plan, backend, fill, progress);
      });
  return loaded;
}

// Writes elements [begin, end) of a transposed spec to dst in dtype: the parameter's rows are
// the stored tensor's columns, gathered a tile of rows at a time so that every stored row
// segment read is contiguous.
void fill_transposed(const TensorInfo& info, int64_t begin, int64_t end, void* dst, DType dtype) {
  constexpr int64_t kTileRows = 64;
  const int64_t rows = info.shape.back();                  // parameter rows per matrix (out)
  const int64_t cols = info.shape[info.shape.size() - 2];  // parameter columns (in)
  const size_t in_size = dtype_size(info.dtype), out_size = dtype_size(dtype);
  std::vector<float> tile(kTileRows * cols), segment(kTileRows);
  char* cursor = static_cast<char*>(dst);
  for (int64_t row = begin / cols; row * cols < end;) {
    const int64_t matrix = row / rows, first = row % rows;
    const int64_t n = std::min({kTileRows, rows - first, (end + cols - 1) / cols - row});
    const char* base = static_cast<const char*>(info.data) +
                       (matrix * rows * cols + first) * static_cast<int64_t>(in_size);
    for (int64_t c = 0; c < cols; ++c) {
      convert_to_f32(base + c * rows * in_size, info.dtype, segment.data(), n);
      for (int64_t j = 0; j < n; ++j) tile[j * cols + c] = segment[j];
    }
    const int64_t from = std::max(begin, row * cols), to = std::min(end, (row + n) * cols);
    convert_from_f32(tile.data() + (from - row * cols), cursor, dtype, to - from);
    cursor += (to - from) * out_size;
    row += n;
  }
}

// Uploads a kept spec's scales and fills its Fp8Weight (the codes are *spec.target).
void publish_fp8(const WeightSpec& spec, const KeptFp8& kept, Backend& backend,
                 LoadedWeights& loaded) {
  const Fp8Layout& layout = kept.layout;
  std::vector<float> host = layout.scales;
  Buffer scales = backend.allocate(host.size() * sizeof(float));
  const Tensor device = scales.view(DType::F32, {layout.scale_rows, layout.scale_cols});
  backend.copy(Tensor::view_of(host.data(), DType::F32, {layout.scale_rows, layout.scale_cols}),
               device);
  *spec.fp8 = {*spec.target, device, layout.block_n, layout.block_k, kept.act_group, kept.ue8m0};
  loaded.bytes += device.nbytes();
  loaded.buffers.push_back(std::move(scales));
}

}  // namespace

std::string load_progress_amount(size_t done_bytes, size_t total_bytes, double seconds) {
  const auto [scale, unit] = total_bytes >= 1000000000 ? std::pair{1e9, "GB"}
                             : total_bytes >= 1000000  ? std::pair{1e6, "MB"}
                                                       : std::pair{1e3, "kB"};
  const double rate = seconds > 0 ? done_bytes / seconds / scale : 0;
  return fmt::format("{:.1f} of {:.1f} {}, {:.1f} {}/s", done_bytes / scale, total_bytes / scale,
                     unit, rate, unit);
}

void check_weights_fit(size_t weight_bytes, std::optional<size_t> free_bytes,
                       const std::string& device) {
  if (free_bytes && weight_bytes > *free_bytes)
    input_error(
        "the model does not fit: its weights need {:.2f} GB on {} and {:.2f} GB are "
        "free (a device with more memory or a smaller or quantised checkpoint would)",
        weight_bytes / 1e9, device, *free_bytes / 1e9);
}

LoadedWeights load_weights(const WeightPlan& plan, const Checkpoint& checkpoint, Backend& backend,
                           bool show_progress, const QuantConfig& quant,
                           Quantization quantization) {
  const std::vector<std::string> problems = check_plan(plan, checkpoint, quant);
  if (!problems.empty()) {
    std::string message =
        fmt::format("the checkpoint does not match the model ({} problems):", problems.size());
    for (size_t i = 0; i < problems.size() && i < 20; ++i) message += "\n  " + problems[i];
    if (problems.size() > 20) message += fmt::format("\n  ... and {} more", problems.size() - 20);
    throw InputError(message + "\nhint: is config.json from the same checkpoint?");
  }
  if (quantization == Quantization::kFp8 && !backend.supports_fp8_linear())
    input_error("--quantization fp8: the {} backend has no FP8 linear yet", backend.name());
  const bool keep_fp8 =
      quantization == Quantization::kFp8 || backend.weight_dtype(DType::F8_E4M3) == DType::F8_E4M3;
  std::vector<std::optional<DType>> dtypes;
  std::vector<std::vector<SpecSource>> sources;
  std::vector<std::optional<KeptFp8>> kept;
  for (const WeightSpec& spec : plan.specs()) {
    const TensorInfo* first = checkpoint.find(spec.sources[0].name);
    dtypes.push_back(first ? std::optional(backend.weight_dtype(first->dtype)) : std::nullopt);
    std::vector<SpecSource>& infos = sources.emplace_back();
    if (first)  // else optional and absent
      for (const WeightSource& source : spec.sources) {
        const TensorInfo* info = checkpoint.find(source.name);
        infos.push_back({info, read_fp8_scales(checkpoint, *info, quant), source.slice});
      }
    kept.push_back(plan_kept_fp8(spec, infos, keep_fp8, quantization == Quantization::kFp8, quant));
    if (kept.back()) dtypes.back() = DType::F8_E4M3;
  }
  LoadedWeights loaded = materialise(
      plan, dtypes, backend, show_progress,
      [&](size_t spec_idx, int64_t begin, int64_t end, void* dst) {
        const WeightSpec& spec = plan.specs()[spec_idx];
        if (kept[spec_idx])
          fill_fp8_codes(sources[spec_idx], *kept[spec_idx], spec.shape()[1], begin, end, dst);
        else if (spec.transposed)
          fill_transposed(*sources[spec_idx][0].info, begin, end, dst, *dtypes[spec_idx]);
        else
          fill_from_sources(sources[spec_idx], begin, end, dst, *dtypes[spec_idx]);
      });
  for (size_t i = 0; i < kept.size(); ++i)
    if (kept[i]) publish_fp8(plan.specs()[i], *kept[i], backend, loaded);
  return loaded;
}

LoadedWeights load_dummy_weights(const WeightPlan& plan, Backend& backend, DType checkpoint_dtype,
                                 uint64_t seed, bool show_progress, const QuantConfig& quant,
                                 Quantization quantization) {
  if (quantization == Quantization::kFp8 && !backend.supports_fp8_linear())
    input_error("--quantization fp8: the {} backend has no FP8 linear yet", backend.name());
  const bool keep_fp8 =
      quantization == Quantization::kFp8 || backend.weight_dtype(DType::F8_E4M3) == DType::F8_E4M3;
  const DType dtype = backend.weight_dtype(checkpoint_dtype);
  std::vector<std::optional<DType>> dtypes;  // raw specs (packed integers) stay bytes
  std::vector<std::optional<KeptFp8>> kept;  // FP8 codes of the values below
  for (const WeightSpec& spec : plan.specs()) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(spec.shape().back()));
    kept.push_back(
        plan_dummy_fp8(spec, quant, keep_fp8, quantization == Quantization::kFp8, bound));
    dtypes.push_back(spec.raw ? DType::U8 : kept.back() ? DType::F8_E4M3 : dtype);
  }
  std::vector<uint64_t> seeds;
  uint64_t spec_seed = seed;
  for (size_t i = 0; i < plan.specs().size(); ++i) {
    spec_seed = spec_seed * 6364136223846793005ull + 1442695040888963407ull;
    seeds.push_back(spec_seed);
  }
  // Values depend only on (spec seed, 65536-element block), never on the upload chunking.
  LoadedWeights loaded = materialise(
      plan, dtypes, backend, show_progress,
      [&](size_t spec_idx, int64_t begin, int64_t end, void* dst) {
        if (plan.specs()[spec_idx].raw) {  // MXFP4 bytes: codes 7 (6.0) under scale 2^-8
          std::memset(dst, kDummyRawByte, end - begin);
          return;
        }
        const std::vector<int64_t> shape = plan.specs()[spec_idx].shape();
        const bool is_vector = shape.size() == 1;
        const float scale = is_vector ? 0.1f : 1.0f / std::sqrt(static_cast<float>(shape.back()));
        const float offset = is_vector ? 1.0f : 0.0f;
        const DType out_dtype = *dtypes[spec_idx];
        float values[4096];
        for (int64_t block = begin / 65536; block * 65536 < end; ++block) {
          uint64_t state = seeds[spec_idx] ^ (block * 0x9e3779b97f4a7c15ull);
          for (int64_t i = block * 65536; i < std::min(end, (block + 1) * 65536); i += 4096) {
            const int64_t count = std::min<int64_t>(4096, end - i);
            for (int64_t j = 0; j < count; ++j) {
              state ^= state << 13, state ^= state >> 7, state ^= state << 17;
              values[j] = offset + scale * (static_cast<float>(state >> 40) / 8388608.0f - 1.0f);
            }
            char* out = static_cast<char*>(dst) + (i - begin) * dtype_size(out_dtype);
            if (kept[spec_idx]) {  // every dummy scale is the same: scale / 448
              const float code_scale = kept[spec_idx]->layout.scales[0];
              for (int64_t j = 0; j < count; ++j)
                out[j] = static_cast<char>(f32_to_fp8_e4m3(values[j] / code_scale));
            } else {
              convert_from_f32(values, out, out_dtype, count);
            }
          }
        }
      });
  for (size_t i = 0; i < kept.size(); ++i)
    if (kept[i]) publish_fp8(plan.specs()[i], *kept[i], backend, loaded);
  return loaded;
}

}  // namespace hadron
