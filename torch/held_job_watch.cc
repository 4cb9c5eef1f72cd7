#include "held_job_watch.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "worker.h"

namespace rcc_torch::held_job_watch {
namespace {

// Never destroyed: the thread may still run when the interpreter ends without
// destroy_process_group, and a joinable std::thread destroyed at exit would terminate the process.
struct State {
  std::mutex lifecycle;  // start() and stop(), one at a time
  int users = 0;         // under lifecycle
  std::thread thread;    // under lifecycle

  std::mutex mutex;  // stopping, and changes of awake (read without it on the callers' path)
  std::condition_variable changed;
  bool stopping = false;
  std::atomic<bool> awake{false};  // note_held() wakes the thread only when it sleeps
  std::atomic<uint64_t> holds{0};
};
State& state() {
  static State* const s = new State;
  return *s;
}

void watch() {
  pthread_setname_np(pthread_self(), "rcc-torch-held");
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  uint64_t seen = s.holds.load();
  int idle_rounds = 0;
  for (;;) {
    s.changed.wait(lock, [&s] { return s.awake.load() || s.stopping; });
    if (s.changed.wait_for(lock, kHeldLongest, [&s] { return s.stopping; })) return;
    lock.unlock();
    Worker::release_held_jobs_older_than(kHeldLongest);
    lock.lock();
    const uint64_t holds = s.holds.load();
    if (holds != seen) {
      seen = holds;
      idle_rounds = 0;
    } else if (++idle_rounds >= kIdleRounds) {
      // Asleep from here, unless a hold came after note_held() last read the flag.
      s.awake.store(false);
      if (s.holds.load() != seen) s.awake.store(true);
      idle_rounds = 0;
    }
  }
}

}  // namespace

void start() {
  State& s = state();
  std::lock_guard<std::mutex> lifecycle(s.lifecycle);
  if (s.users++ > 0) return;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stopping = false;
  }
  s.thread = std::thread(watch);
}

void stop() {
  State& s = state();
  std::lock_guard<std::mutex> lifecycle(s.lifecycle);
  if (s.users == 0 || --s.users > 0) return;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stopping = true;
  }
  s.changed.notify_all();
  s.thread.join();
}

void note_held() {
  State& s = state();
  s.holds.fetch_add(1);
  if (s.awake.load()) return;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.awake.store(true);
  }
  s.changed.notify_all();
}

}  // namespace rcc_torch::held_job_watch
