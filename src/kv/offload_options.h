// Options of the KV offload tiers below the device pool (--kv-offloading-size and friends).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hadron {

// How the disk tier reads and writes its files.
enum class DiskIoKind : uint8_t {
  kAuto,   // io_uring, or pread/pwrite where io_uring setup is refused (seccomp, old kernels)
  kPosix,  // pread/pwrite always (HADRON_KV_OFFLOAD_IO=posix)
};

struct OffloadOptions {
  size_t host_bytes = 0;  // host-memory tier; 0: no offloading (then no disk tier either)
  std::string disk_dir;   // the disk tier makes its own private folder in here; empty: none
  size_t disk_bytes = 0;  // the disk tier's capacity
  DiskIoKind io = DiskIoKind::kAuto;

  bool enabled() const { return host_bytes > 0; }
  bool disk_enabled() const { return enabled() && !disk_dir.empty() && disk_bytes > 0; }
};

}  // namespace hadron
