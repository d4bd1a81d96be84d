// A fixed pool of worker threads for data-parallel loops on the CPU.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hadron {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n), on all threads including the
  // caller (on the caller alone while another thread's job holds the pool); returns when
  // every chunk is done. Rethrows the first exception a chunk threw.
  // `work` estimates the whole job in multiply-adds: below kMinParallelWork the caller runs
  // it alone, since waking the workers costs more than such a job.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t work = INT64_MAX);

  static constexpr int64_t kMinParallelWork = int64_t{1} << 20;

  // The process-wide pool used by the CPU backend (HADRON_NUM_THREADS or all cores).
  static ThreadPool& global();

 private:
  void worker_loop(int worker_idx);
  void run_chunk(int chunk_idx);

  std::vector<std::thread> workers_;
  std::mutex caller_mutex_;  // held by the one caller whose job the workers run
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_size_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace hadron
