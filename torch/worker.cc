#include "worker.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "held_job_watch.h"

namespace rcc_torch {
namespace {

// Every live worker, for release_held_jobs. Lock order: its mutex, then a worker's mutex_ (a worker
// never takes it while holding its own). Never destroyed: a group may outlive the library's static
// objects when the interpreter ends without destroy_process_group.
struct Workers {
  std::mutex mutex;
  std::vector<Worker*> all;
};
Workers& workers() {
  static Workers* const list = new Workers;
  return *list;
}
// Jobs held right now, in all groups: most calls find none and skip the lock.
std::atomic<int> g_held_jobs{0};

}  // namespace

Worker::Worker() : thread_(&Worker::run, this) {
  {
    std::lock_guard<std::mutex> lock(workers().mutex);
    workers().all.push_back(this);
  }
  held_job_watch::start();
}

Worker::~Worker() { stop(); }

void Worker::stop() {
  {
    std::lock_guard<std::mutex> lock(workers().mutex);
    std::vector<Worker*>& all = workers().all;
    const auto end = std::remove(all.begin(), all.end(), this);
    if (end == all.end()) return;  // stopped before
    all.erase(end, all.end());
  }
  held_job_watch::stop();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    unhold_locked();  // what is queued runs before the worker stops
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Worker::unhold_locked() {
  if (!held_) return;
  held_ = false;
  g_held_jobs.fetch_sub(1, std::memory_order_relaxed);
}

void Worker::enqueue(std::function<void()> job, const void* key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back({std::move(job), key});
    unhold_locked();  // the held job is ahead of this one, and this one must not wait for a caller
  }
  wake_.notify_all();
}

bool Worker::hold_if_idle(std::function<void()>&& job, const void* key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (busy_ || !jobs_.empty() || stopping_) return false;
    jobs_.push_back({std::move(job), key});
    held_ = true;
    held_since_ = std::chrono::steady_clock::now();
    g_held_jobs.fetch_add(1, std::memory_order_relaxed);
  }
  held_job_watch::note_held();
  return true;
}

void Worker::release_held(const Worker* keep, std::chrono::steady_clock::time_point held_before) {
  if (g_held_jobs.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> all(workers().mutex);
  for (Worker* worker : workers().all) {
    if (worker == keep) continue;
    {
      std::lock_guard<std::mutex> lock(worker->mutex_);
      if (!worker->held_ || worker->held_since_ > held_before) continue;
      worker->unhold_locked();
    }
    worker->wake_.notify_all();
  }
}

void Worker::release_held_jobs(const Worker* keep) { release_held(keep, std::chrono::steady_clock::time_point::max()); }

void Worker::release_held_jobs_older_than(std::chrono::steady_clock::duration age) {
  release_held(nullptr, std::chrono::steady_clock::now() - age);
}

bool Worker::run_if_next(const void* key) {
  std::function<void()> job;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (key == nullptr || busy_ || jobs_.empty() || jobs_.front().key != key) return false;
    job = std::move(jobs_.front().job);
    jobs_.pop_front();
    unhold_locked();
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
    wake_.wait(lock, [this] { return !busy_ && (stopping_ || (!jobs_.empty() && !held_)); });
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
