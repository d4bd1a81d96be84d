// Counters of the KV offload tiers, for /metrics and the benchmarks.
#pragma once

#include <cstdint>
#include <string>

namespace hadron {

struct OffloadTierStats {
  int64_t capacity_blocks = 0;
  int64_t blocks = 0;          // held now
  int64_t bytes = 0;           // held now (the disk tier's with headers and padding)
  int64_t stored_blocks = 0;   // written into this tier
  int64_t hit_blocks = 0;      // served from this tier to the device pool
  int64_t dropped_blocks = 0;  // failed an integrity or I/O check: dropped, recomputed
  // Copies into and out of this tier: device -> host and host -> device for the host tier,
  // host -> disk and disk -> host for the disk tier. Wall time on the engine thread.
  int64_t write_bytes = 0;
  int64_t read_bytes = 0;
  double write_seconds = 0;
  double read_seconds = 0;
};

struct OffloadStats {
  bool enabled = false;
  OffloadTierStats host;
  OffloadTierStats disk;
  std::string disk_io;  // "io_uring", "pread/pwrite", or empty without a disk tier
};

}  // namespace hadron
