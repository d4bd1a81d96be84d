// /metrics: speculative decoding's counters appear when speculation is configured.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace hadron::server {
namespace {

TEST(Metrics, SpeculationCountersOnlyWhenConfigured) {
  const Metrics metrics;
  EngineStats stats;
  EXPECT_EQ(metrics.render(stats, "m").find("spec_decode"), std::string::npos);
  stats.spec = {3, 9, 5, {3, 2, 0}, 3};
  const std::string text = metrics.render(stats, "m");
  for (const char* line :
       {"hadron_spec_decode_num_drafts_total{model_name=\"m\"} 3\n",
        "hadron_spec_decode_num_draft_tokens_total{model_name=\"m\"} 9\n",
        "hadron_spec_decode_num_accepted_tokens_total{model_name=\"m\"} 5\n",
        "hadron_spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"1\"} 2\n",
        "hadron_spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"2\"} 0\n",
        "hadron_spec_decode_k{model_name=\"m\"} 3\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line;
}

}  // namespace
}  // namespace hadron::server
