#include "loader/fp8_weights.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "core/fp8.h"

namespace hadron {
namespace {

constexpr int64_t kDefaultBlock = 128;  // DeepSeek-V3's and Qwen3-FP8's weight_block_size

std::string prefix_of(const std::string& weight_name) {
  constexpr std::string_view kSuffix = "weight";
  if (!weight_name.ends_with(kSuffix)) return "";
  return weight_name.substr(0, weight_name.size() - kSuffix.size());
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rows and columns of the weight each scale element covers; nullopt when the scale's shape
// fits none of the layouts. The weight is 2-D [out, in].
std::optional<std::pair<int64_t, int64_t>> scale_block(const TensorInfo& weight,
                                                       const TensorInfo& scale,
                                                       const QuantConfig& quant) {
  const int64_t out = weight.shape[0], in = weight.shape[1];
  const std::vector<int64_t>& shape = scale.shape;
  if (scale.numel() == 1) return std::pair{out, in};
  const bool sized = quant.weight_block_size.size() == 2;
  const int64_t b0 = sized ? quant.weight_block_size[0] : kDefaultBlock;
  const int64_t b1 = sized ? quant.weight_block_size[1] : kDefaultBlock;
  if (shape == std::vector{ceil_div(out, b0), ceil_div(in, b1)}) return std::pair{b0, b1};
  if (shape == std::vector<int64_t>{out, 1} || shape == std::vector<int64_t>{out})
    return std::pair<int64_t, int64_t>{1, in};
  return std::nullopt;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

std::vector<std::string> fp8_companion_names(const std::string& weight_name) {
  const std::string prefix = prefix_of(weight_name);
  if (prefix.empty()) return {};
  return {prefix + "weight_scale_inv", prefix + "weight_scale", prefix + "input_scale"};
}

const TensorInfo* find_fp8_scale(const Checkpoint& checkpoint, const TensorInfo& weight) {
  if (weight.dtype != DType::F8_E4M3) return nullptr;
  const std::vector<std::string> names = fp8_companion_names(weight.name);
  for (size_t i = 0; i < names.size() && i < 2; ++i)  // the two weight scales
    if (const TensorInfo* scale = checkpoint.find(names[i])) return scale;
  return nullptr;
}

std::string fp8_problem(const Checkpoint& checkpoint, const TensorInfo& weight,
                        const QuantConfig& quant) {
  const TensorInfo* scale = find_fp8_scale(checkpoint, weight);
  if (scale == nullptr) {
    // Converting such a weight as stored would silently drop the scales the config promises.
    if (weight.dtype == DType::F8_E4M3 && !quant.method.empty())
      return fmt::format(
          "{} in {}: F8_E4M3 under quant_method {} but no weight_scale_inv or weight_scale "
          "beside it (hint: are the scale tensors missing from the checkpoint?)",
          weight.name, weight.file, quant.method);
    return "";
  }
  if (scale->dtype != DType::F32 && scale->dtype != DType::BF16)
    return fmt::format("{} in {}: FP8 scale dtype {} is not F32 or BF16", scale->name, scale->file,
                       dtype_name(scale->dtype));
  if (weight.shape.size() != 2)
    return fmt::format("{} in {}: FP8 weights of shape {} are not supported (2-D only)",
                       weight.name, weight.file, shape_text(weight.shape));
  if (!scale_block(weight, *scale, quant))
    return fmt::format(
        "{} in {}: shape {} is no FP8 scale layout for weight {} (per tensor [1], per channel "
        "[{}, 1], or blocks of weight_block_size)",
        scale->name, scale->file, shape_text(scale->shape), shape_text(weight.shape),
        weight.shape[0]);
  return "";
}

std::optional<Fp8Scales> read_fp8_scales(const Checkpoint& checkpoint, const TensorInfo& weight,
                                         const QuantConfig& quant) {
  const TensorInfo* scale = find_fp8_scale(checkpoint, weight);
  if (scale == nullptr) return std::nullopt;
  const auto block = scale_block(weight, *scale, quant);
  HADRON_CHECK(block.has_value(), "{}: unchecked FP8 scale layout", scale->name);
  Fp8Scales scales{scale, std::vector<float>(scale->numel()), weight.shape[1], block->first,
                   block->second};
  convert_to_f32(scale->data, scale->dtype, scales.values.data(), scales.values.size());
  return scales;
}

void dequantize_fp8(const TensorInfo& weight, const Fp8Scales& scales, int64_t begin, int64_t end,
                    void* dst, DType dst_dtype) {
  const auto* codes = static_cast<const uint8_t*>(weight.data);
  const int64_t n_scale_cols = ceil_div(scales.cols, scales.block_cols);
  float values[4096];
  char* cursor = static_cast<char*>(dst);
  for (int64_t first = begin; first < end; first += 4096) {
    const int64_t count = std::min<int64_t>(4096, end - first);
    for (int64_t j = 0; j < count; ++j) {
      const int64_t row = (first + j) / scales.cols, col = (first + j) % scales.cols;
      const float scale =
          scales.values[row / scales.block_rows * n_scale_cols + col / scales.block_cols];
      values[j] = fp8_e4m3_to_f32(codes[first + j]) * scale;
    }
    convert_from_f32(values, cursor, dst_dtype, count);
    cursor += count * dtype_size(dst_dtype);
  }
}

std::optional<Fp8Layout> merge_fp8_scales(const std::vector<const Fp8Scales*>& parts,
                                          const std::vector<int64_t>& part_rows) {
  HADRON_CHECK(!parts.empty() && parts.size() == part_rows.size(), "merge_fp8_scales: {} parts",
               parts.size());
  const int64_t cols = parts[0]->cols;
  Fp8Layout layout;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Fp8Scales& part = *parts[i];
    int64_t block_n = part.block_rows, block_k = part.block_cols;
    std::vector<float> values = part.values;
    if (parts.size() > 1 && block_n == part_rows[i] && block_k == cols) {  // per tensor
      block_n = 1;
      values.assign(part_rows[i], part.values[0]);
    }
    if (i == 0) layout.block_n = block_n, layout.block_k = block_k;
    if (block_n != layout.block_n || block_k != layout.block_k || part.cols != cols)
      return std::nullopt;
    if (i + 1 < parts.size() && part_rows[i] % block_n != 0) return std::nullopt;
    layout.scales.insert(layout.scales.end(), values.begin(), values.end());
  }
  layout.scale_cols = ceil_div(cols, layout.block_k);
  layout.scale_rows = static_cast<int64_t>(layout.scales.size()) / layout.scale_cols;
  return layout;
}

Fp8Layout per_channel_fp8_scales(const float* weight, int64_t rows, int64_t cols) {
  Fp8Layout layout{std::vector<float>(rows), rows, 1, 1, cols};
  for (int64_t r = 0; r < rows; ++r) {
    float amax = 0;
    for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::abs(weight[r * cols + c]));
    layout.scales[r] = fp8_scale_for(amax, false);
  }
  return layout;
}

}  // namespace hadron
