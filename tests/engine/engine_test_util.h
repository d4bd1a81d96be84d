// Helpers of the engine tests: their options (a fixture model on the CPU, contexts of 96
// tokens in KV blocks of 8, quiet) and random traffic.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/generator.h"
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

// Random prompt tokens (ids 3 to 502: the fixtures' vocabularies hold them).
inline std::vector<int32_t> random_tokens(std::mt19937& rng, int n) {
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = 3 + static_cast<int32_t>(rng() % 500);
  return tokens;
}

inline GenerationRequest greedy(std::vector<int32_t> prompt, int64_t max_tokens) {
  GenerationRequest request{std::move(prompt), {}};
  request.params.max_tokens = max_tokens;
  request.params.ignore_eos = true;
  return request;
}

// Random greedy traffic over prompts that extend a few shared prefixes, each completed request
// checked against the same request on `reference` (a model without the cache under test).
struct SharedPrefixTraffic {
  Engine& engine;
  LoadedModel& reference;
  std::vector<std::vector<int32_t>> prefixes;
  int max_tail = 10;       // random tokens after the prefix: 1 to max_tail
  int64_t max_tokens = 6;  // outputs: 1 to max_tokens
  std::map<uint64_t, GenerationRequest> live;
  std::map<uint64_t, std::vector<int32_t>> outputs;
  uint64_t next_id = 0;
  int n_checked = 0;

  // action 0 or 1: add a request; 2: abort one (a third of the time); else step.
  void round(std::mt19937& rng, int action) {
    if (action <= 1) {
      std::vector<int32_t> prompt = prefixes[rng() % prefixes.size()];
      const std::vector<int32_t> tail = random_tokens(rng, 1 + static_cast<int>(rng() % max_tail));
      prompt.insert(prompt.end(), tail.begin(), tail.end());
      GenerationRequest request = greedy(prompt, 1 + static_cast<int64_t>(rng() % max_tokens));
      engine.add_request(next_id, request.prompt, request.params);
      live.emplace(next_id++, std::move(request));
    } else if (action == 2 && !live.empty() && rng() % 3 == 0) {
      auto victim = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      engine.abort_request(victim->first);
      outputs.erase(victim->first);
      live.erase(victim);
    } else {
      for (const RequestOutput& out : engine.step()) {
        auto& tokens = outputs[out.request_id];
        tokens.insert(tokens.end(), out.token_ids.begin(), out.token_ids.end());
        if (!out.finished) continue;
        EXPECT_EQ(tokens, generate(reference, {live.at(out.request_id)})[0].completions[0])
            << "request " << out.request_id;
        ++n_checked;
        live.erase(out.request_id);
        outputs.erase(out.request_id);
      }
    }
  }
};

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
