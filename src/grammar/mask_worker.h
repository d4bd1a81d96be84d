// One background thread that computes mask positions ahead of need (TokenMasker::prefetch):
// the next position's mask is walked while the model computes the step that needs it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace hadron::grammar {

class MaskWorker {
 public:
  MaskWorker();
  ~MaskWorker();  // drops tasks not started
  MaskWorker(const MaskWorker&) = delete;
  MaskWorker& operator=(const MaskWorker&) = delete;

  void post(std::function<void()> task);
  // The process's worker, started on first use.
  static MaskWorker& shared();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hadron::grammar
