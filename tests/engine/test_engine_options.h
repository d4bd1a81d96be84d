// The engine tests' options: a fixture model on the CPU, contexts of 96 tokens in KV blocks of
// 8, quiet.
#pragma once

#include <string>

#include "engine/loaded_model.h"

namespace hadron {

inline EngineOptions test_engine_options(const std::string& fixture, int64_t max_num_seqs,
                                         int64_t num_kv_blocks, int64_t batched_tokens) {
  EngineOptions options;
  options.model_path = std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/" + fixture;
  options.max_model_len = 96;
  options.block_size = 8;
  options.max_num_seqs = max_num_seqs;
  options.max_num_batched_tokens = batched_tokens;
  options.num_kv_blocks = num_kv_blocks;
  options.verbose = false;
  return options;
}

}  // namespace hadron
