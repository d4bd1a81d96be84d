// The parts of ModelConfig read from config.json, one function per section (hf_config.cpp
// puts them together).
#pragma once

#include "loader/config_reader.h"
#include "loader/hf_config.h"

namespace hadron {

// Upper bounds that keep later size arithmetic far from overflow.
inline constexpr int64_t kMaxDim = int64_t{1} << 24;     // hidden, heads, head_dim, ranks
inline constexpr int64_t kMaxLayers = int64_t{1} << 16;  // also the length of layer_types

// An integer that must be in [0, max] (fallback when absent).
int64_t bounded_integer(const ConfigReader& config, std::string_view key, int64_t fallback,
                        int64_t max);

// rope_parameters (transformers 5) or rope_scaling (4), with rope_theta and
// partial_rotary_factor inside them or at the top level.
RopeConfig read_rope(const ConfigReader& config, int64_t max_position_embeddings);
// Routed and shared experts and their routing; all zero for a dense model.
MoeConfig read_moe(const ConfigReader& config, int64_t intermediate_size, int64_t n_layers);
MlaConfig read_mla(const ConfigReader& config);
LinearAttentionConfig read_linear_attention(const ConfigReader& config);
QuantConfig read_quant(const ConfigReader& config);
// layer_types as given, or derived from full_attention_interval or the sliding window.
std::vector<LayerKind> read_layer_types(const ConfigReader& config, int64_t n_layers,
                                        int64_t sliding_window, int64_t full_attention_interval);

}  // namespace hadron
