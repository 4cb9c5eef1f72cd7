// The thread that runs one process group's collectives, one after the other in the order they
// were issued (the same on every rank), while the caller goes on computing. A small collective
// issued while nothing is queued or running runs on the caller's thread instead: two thread
// hand-offs would cost more than it does, and the order is kept all the same. So does a queued one
// that its caller waits for before the worker has started it (a blocking call, in effect).
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
  // The same, now: works may keep this object alive after their group is gone, but nothing runs on
  // the group's communicator after stop() returns. Idempotent.
  void stop();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  // Queues job; `key` names it for run_if_next.
  void enqueue(std::function<void()> job, const void* key = nullptr);
  // Runs job now on this thread if no job is queued or running (true), else does nothing (false).
  bool run_now_if_idle(const std::function<void()>& job);
  // Runs the job queued under `key` on this thread if it is the next one and nothing runs (true),
  // else does nothing (false: it runs, ran, or waits behind others on the worker).
  bool run_if_next(const void* key);

 private:
  struct Queued {
    std::function<void()> job;
    const void* key;
  };
  void run();
  // Runs job on this thread (busy_ set by the caller), then wakes the worker if it has work.
  void run_here(const std::function<void()>& job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> jobs_;
  bool busy_ = false;  // a job runs (on the worker or a caller)
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest exists
};

}  // namespace rcc_torch
