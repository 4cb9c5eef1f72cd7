// The thread that runs one process group's collectives, one after the other in the order they
// were issued (the same on every rank), while the caller goes on computing.
//
// A small collective issued while nothing is queued or running is held instead of handed over:
// torch waits right after issuing a blocking call, and the wait then runs it on the caller's thread
// (two thread hand-offs would cost more than the collective). A held job goes to its worker as soon
// as the program does anything else with rcc: another operation on any group, a wait on another
// work, polling this one or taking its future (release_held_jobs), or after
// held_job_watch::kHeldLongest at the latest. So an asynchronous call still runs beside the caller,
// and a program gloo runs (an async collective, then the send a peer needs before it joins; async
// calls on two groups issued in different orders) cannot deadlock on a collective that never
// started.
#pragma once

#include <chrono>
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
  // Queues job (releasing a held one ahead of it); `key` names it for run_if_next.
  void enqueue(std::function<void()> job, const void* key = nullptr);
  // Holds job (moved from) if nothing is queued or running (true), else leaves it as it is (false:
  // enqueue it).
  bool hold_if_idle(std::function<void()>&& job, const void* key);
  // Runs the job queued or held under `key` on this thread if it is the next one and nothing runs
  // (true), else does nothing (false: it runs, ran, or waits behind others on the worker).
  bool run_if_next(const void* key);
  // Hands every group's held job to its worker, except `keep`'s (null: every one).
  static void release_held_jobs(const Worker* keep);
  // The same for the jobs held at least `age` (held_job_watch).
  static void release_held_jobs_older_than(std::chrono::steady_clock::duration age);

 private:
  struct Queued {
    std::function<void()> job;
    const void* key;
  };
  void run();
  // Runs job on this thread (busy_ set by the caller), then wakes the worker if it has work.
  void run_here(const std::function<void()>& job);
  // Under mutex_: the front job is no longer held (it ran, or goes to the worker).
  void unhold_locked();
  // Hands the held jobs of every worker but `keep` held since `held_before` or earlier to their workers.
  static void release_held(const Worker* keep, std::chrono::steady_clock::time_point held_before);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> jobs_;
  bool busy_ = false;  // a job runs (on the worker or a caller)
  bool held_ = false;  // the front job waits for its caller or a release, not for the worker
  std::chrono::steady_clock::time_point held_since_{};
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest exists
};

}  // namespace rcc_torch
