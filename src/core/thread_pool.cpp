#include "core/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace hadron {

ThreadPool::ThreadPool(int n_threads) {
  for (int i = 1; i < std::max(1, n_threads); ++i)
    workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool([] {
    if (const char* env = std::getenv("HADRON_NUM_THREADS")) return std::max(1, std::atoi(env));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }());
  return pool;
}

void ThreadPool::run_chunk(int chunk_idx) {
  const int64_t n_chunks = n_threads();
  const int64_t begin = job_size_ * chunk_idx / n_chunks;
  const int64_t end = job_size_ * (chunk_idx + 1) / n_chunks;
  if (begin >= end) return;
  try {
    (*job_)(begin, end);
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t work) {
  if (n <= 0) return;
  // A second caller while the pool runs another's job (tensor-parallel ranks are threads of
  // one process) runs its job alone rather than wait.
  std::unique_lock caller(caller_mutex_, std::try_to_lock);
  if (workers_.empty() || n == 1 || work < kMinParallelWork || !caller.owns_lock()) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &fn;
    job_size_ = n;
    pending_ = static_cast<int>(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  run_chunk(0);
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::worker_loop(int worker_idx) {
  uint64_t seen_generation = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen_generation; });
      if (stop_) return;
      seen_generation = generation_;
    }
    run_chunk(worker_idx);
    {
      std::lock_guard lock(mutex_);
      --pending_;
    }
    done_cv_.notify_one();
  }
}

}  // namespace hadron
