#include "kv/offload_disk_io.h"

#if HADRON_HAVE_URING
#include <liburing.h>
#endif

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

namespace hadron {

size_t DiskOp::bytes() const {
  size_t total = 0;
  for (int i = 0; i < n_iov; ++i) total += iov[i].iov_len;
  return total;
}

namespace {

void run_posix(std::span<DiskOp> ops) {
  for (DiskOp& op : ops) {
    const ssize_t n = op.write ? pwritev(op.fd, op.iov.data(), op.n_iov, 0)
                               : preadv(op.fd, op.iov.data(), op.n_iov, 0);
    op.result = n < 0 ? -errno : n;
  }
}

class PosixDiskIo final : public DiskIo {
 public:
  const char* name() const override { return "pread/pwrite"; }
  void run(std::span<DiskOp> ops) override { run_posix(ops); }
};

#if HADRON_HAVE_URING
// A ring of kDepth entries; a batch larger than that goes in rounds. Should the ring fail
// mid-batch, the ops without a result run through pread/pwrite, and so does every later batch.
class UringDiskIo final : public DiskIo {
 public:
  static constexpr unsigned kDepth = 64;

  explicit UringDiskIo(io_uring ring) : ring_(ring) {}
  ~UringDiskIo() override { io_uring_queue_exit(&ring_); }
  const char* name() const override { return broken_ ? "pread/pwrite" : "io_uring"; }

  void run(std::span<DiskOp> ops) override {
    for (size_t start = 0; start < ops.size(); start += kDepth) {
      const auto batch = ops.subspan(start, std::min<size_t>(kDepth, ops.size() - start));
      if (broken_)
        run_posix(batch);
      else
        run_batch(batch);
    }
  }

 private:
  void run_batch(std::span<DiskOp> ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);  // never null: at most kDepth per batch
      DiskOp& op = ops[i];
      if (op.write)
        io_uring_prep_writev(sqe, op.fd, op.iov.data(), op.n_iov, 0);
      else
        io_uring_prep_readv(sqe, op.fd, op.iov.data(), op.n_iov, 0);
      io_uring_sqe_set_data64(sqe, i);
    }
    size_t submitted = 0;
    while (submitted < ops.size()) {
      const int n = io_uring_submit(&ring_);
      if (n <= 0) break;
      submitted += static_cast<size_t>(n);
    }
    std::vector<bool> done(ops.size(), false);
    for (size_t k = 0; k < submitted; ++k) {
      io_uring_cqe* cqe = nullptr;
      int status = 0;
      do status = io_uring_wait_cqe(&ring_, &cqe);
      while (status == -EINTR);
      if (status < 0) break;
      const uint64_t i = io_uring_cqe_get_data64(cqe);
      ops[i].result = cqe->res;
      done[i] = true;
      io_uring_cqe_seen(&ring_, cqe);
    }
    if (std::find(done.begin(), done.end(), false) == done.end()) return;
    broken_ = true;
    for (size_t i = 0; i < ops.size(); ++i)
      if (!done[i]) run_posix(ops.subspan(i, 1));
  }

  io_uring ring_;
  bool broken_ = false;
};
#endif  // HADRON_HAVE_URING

}  // namespace

std::unique_ptr<DiskIo> make_disk_io(DiskIoKind kind) {
  switch (kind) {
    case DiskIoKind::kAuto: {
#if HADRON_HAVE_URING
      io_uring ring{};
      if (io_uring_queue_init(UringDiskIo::kDepth, &ring, 0) == 0)
        return std::make_unique<UringDiskIo>(ring);
#endif
      return std::make_unique<PosixDiskIo>();
    }
    case DiskIoKind::kPosix:
      return std::make_unique<PosixDiskIo>();
  }
  return nullptr;
}

}  // namespace hadron

namespace hadron {

bool io_uring_available() {
  return std::string(make_disk_io(DiskIoKind::kAuto)->name()) == "io_uring";
}

}  // namespace hadron
