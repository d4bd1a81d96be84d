// Rotary embedding tables for every rope type HF configs use (default, linear, llama3, yarn).
#pragma once

#include <cstdint>
#include <vector>

#include "loader/hf_config.h"

namespace hadron {

// Inverse frequencies [rotary_dim / 2] after the config's scaling, computed as HF does.
std::vector<double> rope_inv_freq(const RopeConfig& rope, int64_t rotary_dim);

// cos/sin table [n_positions, rotary_dim]: for each position p, rotary_dim/2 values
// cos(p * inv_freq[i]) * attention_scaling followed by as many sines (the Backend::rope layout).
std::vector<float> rope_cos_sin_table(const RopeConfig& rope, int64_t rotary_dim,
                                      int64_t n_positions);

// DeepSeek's factor on the softmax scale under YaRN: yarn_get_mscale(factor, mscale_all_dim)^2
// when the config gives mscale_all_dim, else 1 (as transformers' DeepseekV3Attention).
double mla_softmax_mscale(const RopeConfig& rope);

// The rotary dimension of a head: head_dim * partial_rotary_factor.
int64_t rope_rotary_dim(const RopeConfig& rope, int64_t head_dim);

}  // namespace hadron
