#include "models/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

namespace hadron {
namespace {

void apply_llama3(const RopeConfig& rope, std::vector<double>& inv_freq) {
  const double old_len = static_cast<double>(rope.original_max_position_embeddings);
  HADRON_CHECK(old_len > 0, "llama3 rope needs original_max_position_embeddings");
  const double low_freq_wavelen = old_len / rope.low_freq_factor;
  const double high_freq_wavelen = old_len / rope.high_freq_factor;
  for (double& freq : inv_freq) {
    const double wavelen = 2 * std::numbers::pi / freq;
    if (wavelen > low_freq_wavelen) {
      freq /= rope.factor;
    } else if (wavelen >= high_freq_wavelen) {  // medium frequencies: interpolate
      const double smooth = (old_len / wavelen - rope.low_freq_factor) /
                            (rope.high_freq_factor - rope.low_freq_factor);
      freq = (1 - smooth) * freq / rope.factor + smooth * freq;
    }
  }
}

double yarn_mscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

double yarn_attention_factor(const RopeConfig& rope) {
  if (rope.attention_factor > 0) return rope.attention_factor;
  if (rope.mscale != 0 && rope.mscale_all_dim != 0)
    return yarn_mscale(rope.factor, rope.mscale) / yarn_mscale(rope.factor, rope.mscale_all_dim);
  return yarn_mscale(rope.factor, 1.0);
}

void apply_yarn(const RopeConfig& rope, int64_t rotary_dim, std::vector<double>& inv_freq) {
  const double max_pos = static_cast<double>(rope.original_max_position_embeddings);
  HADRON_CHECK(max_pos > 0, "yarn rope needs original_max_position_embeddings");
  auto correction_dim = [&](double n_rotations) {
    return rotary_dim * std::log(max_pos / (n_rotations * 2 * std::numbers::pi)) /
           (2 * std::log(rope.theta));
  };
  double low = correction_dim(rope.beta_fast), high = correction_dim(rope.beta_slow);
  if (rope.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(rotary_dim - 1));
  if (low == high) high += 0.001;
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolation_factor = 1 - ramp;
    const double extrapolated = inv_freq[i], interpolated = inv_freq[i] / rope.factor;
    inv_freq[i] = interpolated * (1 - extrapolation_factor) + extrapolated * extrapolation_factor;
  }
}

}  // namespace

double mla_softmax_mscale(const RopeConfig& rope) {
  if (rope.mscale_all_dim == 0) return 1.0;
  const double mscale = yarn_mscale(rope.factor, rope.mscale_all_dim);
  return mscale * mscale;
}

int64_t rope_rotary_dim(const RopeConfig& rope, int64_t head_dim) {
  const auto rotary_dim = static_cast<int64_t>(head_dim * rope.partial_rotary_factor);
  return rotary_dim - rotary_dim % 2;
}

std::vector<double> rope_inv_freq(const RopeConfig& rope, int64_t rotary_dim) {
  std::vector<double> inv_freq(rotary_dim / 2);
  for (int64_t i = 0; i < rotary_dim / 2; ++i) {
    // As HF: float32 exponent, then 1 / base^exponent.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rotary_dim);
    inv_freq[i] = static_cast<float>(1.0 / std::pow(rope.theta, static_cast<double>(exponent)));
  }
  if (rope.type == "default" || rope.type == "dynamic" || rope.type == "mrope") return inv_freq;
  if (rope.type == "linear") {
    for (double& freq : inv_freq) freq /= rope.factor;
  } else if (rope.type == "llama3") {
    apply_llama3(rope, inv_freq);
  } else if (rope.type == "yarn") {
    apply_yarn(rope, rotary_dim, inv_freq);
  } else {
    input_error("rope type '{}' is not supported (supported: default, linear, llama3, yarn)",
                rope.type);
  }
  return inv_freq;
}

std::vector<float> rope_cos_sin_table(const RopeConfig& rope, int64_t rotary_dim,
                                      int64_t n_positions) {
  const std::vector<double> inv_freq = rope_inv_freq(rope, rotary_dim);
  const double scaling = rope.type == "yarn" ? yarn_attention_factor(rope) : 1.0;
  const int64_t half = rotary_dim / 2;
  std::vector<float> table(n_positions * rotary_dim);
  for (int64_t p = 0; p < n_positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      // HF multiplies in float32: positions.float() @ inv_freq.float()
      const float angle = static_cast<float>(p) * static_cast<float>(inv_freq[i]);
      table[p * rotary_dim + i] = static_cast<float>(std::cos(angle) * scaling);
      table[p * rotary_dim + half + i] = static_cast<float>(std::sin(angle) * scaling);
    }
  }
  return table;
}

}  // namespace hadron
