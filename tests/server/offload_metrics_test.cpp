// /metrics shows the KV offload tiers only when they exist: blocks, bytes, hits per tier and
// bytes and seconds per transfer direction.
#include <gtest/gtest.h>

#include "server/metrics.h"

namespace hadron::server {
namespace {

TEST(OffloadMetrics, PerTierAndPerDirection) {
  Metrics metrics;
  EngineStats stats;
  EXPECT_EQ(metrics.render(stats, "m").find("hadron_kv_offload"), std::string::npos);
  stats.offload.enabled = true;
  stats.offload.host = {.capacity_blocks = 10,
                        .blocks = 4,
                        .bytes = 4096 * 4,
                        .hit_blocks = 3,
                        .write_bytes = 555,
                        .read_seconds = 0.25};
  stats.offload.disk = {
      .capacity_blocks = 100, .blocks = 7, .dropped_blocks = 2, .read_bytes = 777};
  const std::string text = metrics.render(stats, "m");
  for (const char* line :
       {"hadron_kv_offload_blocks{model_name=\"m\",tier=\"host\"} 4\n",
        "hadron_kv_offload_blocks{model_name=\"m\",tier=\"disk\"} 7\n",
        "hadron_kv_offload_capacity_blocks{model_name=\"m\",tier=\"disk\"} 100\n",
        "hadron_kv_offload_bytes{model_name=\"m\",tier=\"host\"} 16384\n",
        "hadron_kv_offload_hit_blocks_total{model_name=\"m\",tier=\"host\"} 3\n",
        "hadron_kv_offload_dropped_blocks_total{model_name=\"m\",tier=\"disk\"} 2\n",
        "hadron_kv_offload_transfer_bytes_total{model_name=\"m\",direction=\"device_to_host\"} "
        "555\n",
        "hadron_kv_offload_transfer_bytes_total{model_name=\"m\",direction=\"disk_to_host\"} 777\n",
        "hadron_kv_offload_transfer_seconds_total{model_name=\"m\",direction=\"host_to_device\"} "
        "0.25\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line;
}

}  // namespace
}  // namespace hadron::server
