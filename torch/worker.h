// The thread that runs one process group's collectives, one after the other in the order they
// were issued (the same on every rank), while the caller goes on computing. A small collective
// issued while nothing is queued or running runs on the caller's thread instead: two thread
// hand-offs would cost more than it does, and the order is kept all the same.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace rcc_torch {

class Worker {
 public:
  Worker();
  // Runs what is queued, then stops.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  void enqueue(std::function<void()> job);
  // Runs job now on this thread if no job is queued or running (true), else does nothing (false).
  bool run_now_if_idle(const std::function<void()>& job);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false;  // a job runs (on the worker or a caller)
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest exists
};

}  // namespace rcc_torch
