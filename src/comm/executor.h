// Runs a communicator's collectives one at a time, in the order they were issued (the same order on
// every rank). A blocking collective runs on the caller's thread when nothing is queued; nonblocking
// ones run on a worker thread started on first use, so callers can overlap them with computation.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace rcc {

// The outcome of one queued collective, shared by the executor and the caller's request.
struct Task {
  std::function<Status()> run;
  bool done = false;
  Status status = RCC_SUCCESS;
  std::string error;
};

class Executor {
 public:
  ~Executor();
  // Runs fn on this thread after every earlier task has finished (a template: no std::function
  // allocation on the blocking path).
  template <typename Fn>
  Status run_now(Fn&& fn) {
    begin_inline();
    Status status = fn();
    end_inline();
    return status;
  }
  // Queues fn; the returned task completes later.
  std::shared_ptr<Task> submit(std::function<Status()> fn);
  // Waits for task; returns its status and makes its message this thread's last error.
  Status wait(const std::shared_ptr<Task>& task);
  bool is_done(const std::shared_ptr<Task>& task);

 private:
  void worker_loop();
  void begin_inline();  // waits until nothing is queued or running, then marks this thread running
  void end_inline();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Task>> queue_;
  bool running_ = false;    // a task (queued or inline) is executing
  int inline_waiters_ = 0;  // callers in begin_inline waiting for their turn
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace rcc
