#include "grammar/mask_worker.h"

namespace hadron::grammar {

MaskWorker::MaskWorker() : thread_([this] { loop(); }) {}

MaskWorker::~MaskWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    tasks_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void MaskWorker::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

MaskWorker& MaskWorker::shared() {
  static MaskWorker worker;
  return worker;
}

void MaskWorker::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
      if (stop_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace hadron::grammar
