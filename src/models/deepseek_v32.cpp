// DeepseekV32ForCausalLM (DeepSeek-V3.2) and GlmMoeDsaForCausalLM (GLM-5): DeepSeek-V3 whose
// every MLA layer attends only to the tokens its lightning indexer selects (index_topk,
// index_n_heads, index_head_dim; MlaAttention adds the indexer when the config has them).
#include "core/error.h"
#include "models/registry.h"

namespace hadron {

std::unique_ptr<Model> make_deepseek_v32(const ModelConfig& config, Backend& backend) {
  if (!config.is_sparse_attention())
    input_error("{}: {} needs kv_lora_rank and index_topk (sparse multi-head latent attention)",
                config.source, config.architecture);
  return make_deepseek_v3(config, backend);
}

}  // namespace hadron
