// Helpers of the engine tests: their options (a fixture model on the CPU, contexts of 96
// tokens in KV blocks of 8, quiet) and random traffic.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
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

// `rounds` random actions on engine: add a request (1 to 40 prompt tokens, 1 to max_tokens
// outputs, n from 1 to max_n), abort one (its blocks are freed at once) or step; then aborts
// what is left and steps until nothing is unfinished.
inline void run_random_traffic(Engine& engine, LoadedModel& model, uint32_t seed, int rounds,
                               int max_n, int max_tokens) {
  std::mt19937 rng(seed);
  uint64_t next_id = 0;
  std::vector<uint64_t> live;
  for (int round = 0; round < rounds; ++round) {
    const int action = rng() % 4;
    if (action == 0) {
      std::vector<int32_t> prompt(1 + rng() % 40);
      for (int32_t& t : prompt) t = 3 + static_cast<int32_t>(rng() % 500);
      SamplingParams params;
      params.max_tokens = 1 + rng() % max_tokens;
      params.ignore_eos = true;
      params.n = 1 + static_cast<int>(rng() % max_n);
      engine.add_request(next_id, prompt, params);
      live.push_back(next_id++);
    } else if (action == 1 && !live.empty()) {
      const size_t victim = rng() % live.size();
      const int64_t free_before = model.blocks().n_free();
      engine.abort_request(live[victim]);
      EXPECT_GE(model.blocks().n_free(), free_before);  // freed in the same step
      live.erase(live.begin() + victim);
    } else {
      for (const RequestOutput& out : engine.step())
        if (out.finished) std::erase(live, out.request_id);
    }
  }
  for (uint64_t id : live) engine.abort_request(id);
  while (engine.has_unfinished()) engine.step();  // siblings of requests already reported
  EXPECT_FALSE(engine.has_unfinished());
}

}  // namespace hadron
