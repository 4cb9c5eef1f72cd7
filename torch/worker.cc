#include "worker.h"

#include <pthread.h>

namespace rcc_torch {

Worker::Worker() : thread_(&Worker::run, this) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Worker::enqueue(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_all();
}

bool Worker::run_now_if_idle(const std::function<void()>& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (busy_ || !jobs_.empty()) return false;
    busy_ = true;
  }
  job();  // catches its own errors (ProcessGroupRcc::launch)
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
    // The worker waits only for jobs queued meanwhile, or to stop. Waking it for nothing is a
    // futex call and a context switch per small collective: with ranks outnumbering cores, every
    // rank's worker then competed with the ranks for the CPUs on every call.
    wake = !jobs_.empty() || stopping_;
  }
  if (wake) wake_.notify_all();
  return true;
}

void Worker::run() {
  pthread_setname_np(pthread_self(), "rcc-torch");  // for top -H, ps -L and the tests
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return (stopping_ && !busy_) || (!jobs_.empty() && !busy_); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    job();  // catches its own errors (ProcessGroupRcc::launch)
    lock.lock();
    busy_ = false;
  }
}

}  // namespace rcc_torch
