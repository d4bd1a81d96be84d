// Ranks that are threads of one process, exchanging host memory directly: the CPU backend's
// tensor parallelism and the tests that check TP=N equals one rank. A ThreadGroup is shared by
// its world_size ranks; each rank's thread uses its own ThreadCommunicator.
//
// Every collective is: publish this rank's pointers, barrier, each rank moves the part it owns
// (all ranks work in parallel and no byte is written by two ranks), barrier. Sums run over
// ranks in rank order, so every rank gets bitwise the same result.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dist/communicator.h"

namespace hadron {

class ThreadGroup {
 public:
  explicit ThreadGroup(int world_size);

  int world_size() const { return world_size_; }
  // The communicator of `rank`, to be used by that rank's thread only.
  std::unique_ptr<Communicator> communicator(int rank);

  // Blocks until every rank arrived; throws Error once the group is aborted.
  void barrier();
  // Wakes every rank waiting in (or later entering) a collective with an Error: a rank that
  // failed calls it so that the others do not wait for it forever.
  void abort();
  bool aborted() const;

  // The pointers each rank published for the current collective.
  void publish(int rank, const void* src, void* dst);
  const void* src(int rank) const { return slots_[rank].src; }
  void* dst(int rank) const { return slots_[rank].dst; }

 private:
  struct Slot {
    const void* src = nullptr;
    void* dst = nullptr;
  };
  const int world_size_;
  std::vector<Slot> slots_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  int n_waiting_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
};

}  // namespace hadron
