#include "models/weight_sources.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/fp8.h"

namespace hadron {

namespace {

// Writes the checkpoint elements [from, to) of one source (a contiguous run) to dst in dtype.
void read_run(const SpecSource& source, int64_t from, int64_t to, char* dst, DType dtype) {
  if (source.fp8) {
    dequantize_fp8(*source.info, *source.fp8, from, to, dst, dtype);
  } else {
    const char* src =
        static_cast<const char*>(source.info->data) + from * dtype_size(source.info->dtype);
    convert_dtype(src, source.info->dtype, dst, dtype, to - from);
  }
}

// Writes elements [begin, end) of a source's slice to dst in dtype. The slice is `outer`
// blocks of `local_block` contiguous elements, block i starting at checkpoint element
// i * full_block + offset.
void read_slice(const SpecSource& source, int64_t begin, int64_t end, char* dst, DType dtype) {
  const std::vector<int64_t>& shape = source.info->shape;
  const auto rank = static_cast<int>(shape.size());
  const int dim = (source.slice.dim + rank) % rank;
  int64_t inner = 1;
  for (int d = dim + 1; d < rank; ++d) inner *= shape[d];
  const int64_t full_block = shape[dim] * inner;
  const int64_t local_block = full_block / source.slice.n_parts;
  const int64_t offset = source.slice.part * local_block;
  for (int64_t i = begin; i < end;) {
    const int64_t block = i / local_block, within = i % local_block;
    const int64_t n = std::min(end - i, local_block - within);
    const int64_t from = block * full_block + offset + within;
    read_run(source, from, from + n, dst, dtype);
    dst += n * dtype_size(dtype);
    i += n;
  }
}

}  // namespace

void fill_from_sources(const std::vector<SpecSource>& sources, int64_t begin, int64_t end,
                       void* dst, DType dtype) {
  char* cursor = static_cast<char*>(dst);
  int64_t source_begin = 0;
  for (const SpecSource& source : sources) {
    const int64_t source_end = source_begin + source.info->numel() / source.slice.n_parts;
    const int64_t from = std::max(begin, source_begin), to = std::min(end, source_end);
    if (from < to) {
      read_slice(source, from - source_begin, to - source_begin, cursor, dtype);
      cursor += (to - from) * dtype_size(dtype);
    }
    source_begin = source_end;
  }
}

namespace {

// Per-channel scales of the spec's values, read a few rows at a time.
Fp8Layout scan_per_channel(const std::vector<SpecSource>& sources, int64_t rows, int64_t cols) {
  constexpr int64_t kRows = 64;
  Fp8Layout layout{{}, rows, 1, 1, cols};
  std::vector<float> chunk(kRows * cols);
  for (int64_t r = 0; r < rows; r += kRows) {
    const int64_t n = std::min(kRows, rows - r);
    fill_from_sources(sources, r * cols, (r + n) * cols, chunk.data(), DType::F32);
    const Fp8Layout part = per_channel_fp8_scales(chunk.data(), n, cols);
    layout.scales.insert(layout.scales.end(), part.scales.begin(), part.scales.end());
  }
  return layout;
}

}  // namespace

std::optional<KeptFp8> plan_kept_fp8(const WeightSpec& spec, const std::vector<SpecSource>& sources,
                                     bool keep_checkpoint_fp8, bool quantize_others,
                                     const QuantConfig& quant) {
  if (spec.fp8 == nullptr || sources.empty()) return std::nullopt;
  const std::vector<int64_t> shape = spec.shape();
  const int64_t rows = shape[0], cols = shape[1];
  const bool all_fp8 = std::all_of(sources.begin(), sources.end(),
                                   [](const SpecSource& source) { return source.fp8.has_value(); });
  const bool none_fp8 = std::none_of(sources.begin(), sources.end(), [](const SpecSource& source) {
    return source.fp8.has_value();
  });
  KeptFp8 kept;
  const bool sliced = std::any_of(sources.begin(), sources.end(), [](const SpecSource& source) {
    return source.slice.n_parts > 1;
  });
  // A tensor-parallel rank's slice of a checkpoint FP8 weight would need its scales sliced on
  // block boundaries too: such weights are dequantized for now.
  if (all_fp8 && keep_checkpoint_fp8 && !sliced) {
    std::vector<const Fp8Scales*> parts;
    std::vector<int64_t> part_rows;
    for (const SpecSource& source : sources) {
      parts.push_back(&*source.fp8);
      part_rows.push_back(source.info->shape[0]);
    }
    std::optional<Fp8Layout> merged = merge_fp8_scales(parts, part_rows);
    if (!merged) return std::nullopt;
    kept.layout = std::move(*merged);
    kept.ue8m0 = quant.scale_fmt == "ue8m0";
  } else if (none_fp8 && quantize_others) {
    kept.layout = scan_per_channel(sources, rows, cols);
    kept.quantize = true;
  } else {
    return std::nullopt;
  }
  // Block-scaled weights meet activations quantized per group of their k block (DeepSeek's
  // scheme); per-channel and per-tensor ones meet per-token activations (one group of K).
  kept.act_group = kept.layout.block_k < cols ? kept.layout.block_k : cols;
  return kept;
}

std::optional<KeptFp8> plan_dummy_fp8(const WeightSpec& spec, const QuantConfig& quant,
                                      bool keep_checkpoint_fp8, bool quantize_others,
                                      float value_bound) {
  if (spec.fp8 == nullptr) return std::nullopt;
  const bool checkpoint_fp8 = quant.method == "fp8" && keep_checkpoint_fp8;
  if (!checkpoint_fp8 && !quantize_others) return std::nullopt;
  const std::vector<int64_t> shape = spec.shape();
  const int64_t rows = shape[0], cols = shape[1];
  const bool blocks = checkpoint_fp8 && quant.weight_block_size.size() == 2;
  KeptFp8 kept;
  kept.layout.block_n = blocks ? quant.weight_block_size[0] : 1;
  kept.layout.block_k = blocks ? quant.weight_block_size[1] : cols;
  kept.layout.scale_rows = (rows + kept.layout.block_n - 1) / kept.layout.block_n;
  kept.layout.scale_cols = (cols + kept.layout.block_k - 1) / kept.layout.block_k;
  kept.layout.scales.assign(kept.layout.scale_rows * kept.layout.scale_cols,
                            value_bound / kFp8E4m3Max);
  kept.quantize = true;
  kept.act_group = kept.layout.block_k < cols ? kept.layout.block_k : cols;
  kept.ue8m0 = checkpoint_fp8 && quant.scale_fmt == "ue8m0";
  return kept;
}

void fill_fp8_codes(const std::vector<SpecSource>& sources, const KeptFp8& kept, int64_t cols,
                    int64_t begin, int64_t end, void* dst) {
  auto* codes = static_cast<uint8_t*>(dst);
  if (!kept.quantize) {  // the checkpoint's codes, concatenated
    int64_t source_begin = 0;
    for (const SpecSource& source : sources) {
      const int64_t source_end = source_begin + source.info->numel();
      const int64_t from = std::max(begin, source_begin), to = std::min(end, source_end);
      if (from < to)
        std::memcpy(codes + (from - begin),
                    static_cast<const uint8_t*>(source.info->data) + (from - source_begin),
                    to - from);
      source_begin = source_end;
    }
    return;
  }
  constexpr int64_t kChunk = 4096;
  float values[kChunk];
  for (int64_t first = begin; first < end; first += kChunk) {
    const int64_t count = std::min(kChunk, end - first);
    fill_from_sources(sources, first, first + count, values, DType::F32);
    for (int64_t i = 0; i < count; ++i)
      codes[first - begin + i] =
          f32_to_fp8_e4m3(values[i] / kept.layout.scales[(first + i) / cols]);
  }
}

}  // namespace hadron
