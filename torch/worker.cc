#include "worker.h"

#include <pthread.h>

namespace rcc_torch {

Worker::Worker() : thread_(&Worker::run, this) {}

Worker::~Worker() { stop(); }

void Worker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Worker::enqueue(std::function<void()> job, const void* key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back({std::move(job), key});
  }
  wake_.notify_all();
}

bool Worker::run_now_if_idle(const std::function<void()>& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (busy_ || !jobs_.empty()) return false;
    busy_ = true;
  }
  run_here(job);
  return true;
}

bool Worker::run_if_next(const void* key) {
  std::function<void()> job;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (key == nullptr || busy_ || jobs_.empty() || jobs_.front().key != key) return false;
    job = std::move(jobs_.front().job);
    jobs_.pop_front();
    busy_ = true;
  }
  // The caller would only sleep until the worker had run it: running it here saves the worker's
  // wake-up and the caller's, each a context switch onto CPUs the ranks need.
  run_here(job);
  return true;
}

void Worker::run_here(const std::function<void()>& job) {
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
}

void Worker::run() {
  pthread_setname_np(pthread_self(), "rcc-torch");  // for top -H, ps -L and the tests
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return (stopping_ && !busy_) || (!jobs_.empty() && !busy_); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front().job);
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    job();  // catches its own errors (ProcessGroupRcc::launch)
    lock.lock();
    busy_ = false;
  }
}

}  // namespace rcc_torch
