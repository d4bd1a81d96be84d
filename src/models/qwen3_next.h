// The Qwen3-Next family's options, shared by Qwen3-Next and Qwen3.5 (dense and MoE).
#pragma once

#include "loader/hf_config.h"
#include "models/decoder_model.h"

namespace hadron {

// Gated DeltaNet and gated attention layers, (1 + w) norms, multi-token-prediction weights
// (mtp.*) unused; for MoE configs softmax top-k experts plus one shared expert scaled by
// sigmoid(shared_expert_gate).
DecoderModelOptions qwen3_next_options(const ModelConfig& config, DeltaNetProjections projections);

}  // namespace hadron
