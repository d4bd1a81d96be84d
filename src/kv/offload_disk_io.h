// Batched file reads and writes for the disk tier: io_uring where the kernel allows it (one
// submission for a whole batch, so reads of many blocks overlap), pread/pwrite otherwise.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "kv/offload_options.h"

namespace hadron {

// One vectored read or write at offset 0 of an open file.
struct DiskOp {
  int fd = -1;
  bool write = false;
  std::array<iovec, 2> iov{};  // e.g. a record's header and payload
  int n_iov = 0;
  int64_t result = 0;  // bytes moved, or -errno; a short count is the caller's to judge

  size_t bytes() const;
};

class DiskIo {
 public:
  virtual ~DiskIo() = default;
  virtual const char* name() const = 0;
  // Runs every op (concurrently where the implementation can) and sets each one's result.
  virtual void run(std::span<DiskOp> ops) = 0;
};

// kAuto: io_uring, or pread/pwrite when io_uring setup fails; kPosix: pread/pwrite.
std::unique_ptr<DiskIo> make_disk_io(DiskIoKind kind);

// Whether this build has io_uring and the kernel lets this process set up a ring.
bool io_uring_available();

}  // namespace hadron
