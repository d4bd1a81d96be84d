// The model registry: architecture string (config.json "architectures") -> factory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/model.h"

namespace hadron {

using ModelFactory = std::unique_ptr<Model> (*)(const ModelConfig& config, Backend& backend);

std::unique_ptr<Model> make_llama(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_qwen3(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_qwen3_moe(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_mixtral(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_glm4_moe(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_gpt_oss(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_deepseek_v3(const ModelConfig& config, Backend& backend);
std::unique_ptr<Model> make_qwen3_next(const ModelConfig& config, Backend& backend);
// Qwen3.5, dense or MoE (the config says which).
std::unique_ptr<Model> make_qwen3_5(const ModelConfig& config, Backend& backend);
// DeepSeek-V3 with sparse attention (DeepSeek-V3.2, GLM-5).
std::unique_ptr<Model> make_deepseek_v32(const ModelConfig& config, Backend& backend);

// Architectures that can run today.
std::vector<std::string> supported_architectures();
// Creates the model for config.architecture; InputError listing the supported ones otherwise.
std::unique_ptr<Model> create_model(const ModelConfig& config, Backend& backend);

}  // namespace hadron
