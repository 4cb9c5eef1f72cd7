#include "comm/executor.h"

#include "base/cpu.h"

namespace rcc {

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Executor::begin_inline() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!queue_.empty() || running_) {
    ++inline_waiters_;
    changed_.wait(lock, [&] { return queue_.empty() && !running_; });
    --inline_waiters_;
  }
  running_ = true;
}

void Executor::end_inline() {
  bool wake;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    running_ = false;
    // Only the worker with tasks queued meanwhile, or another caller waiting to run inline, can
    // proceed now. The idle worker also sleeps on changed_: waking it after every blocking
    // collective cost a futex call and a context switch each (tens of microseconds where ranks
    // outnumber cores) once any nonblocking collective had started the worker.
    wake = !queue_.empty() || inline_waiters_ > 0;
  }
  if (wake) changed_.notify_all();
}

std::shared_ptr<Task> Executor::submit(std::function<Status()> fn) {
  auto task = std::make_shared<Task>();
  task->run = std::move(fn);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    queue_.push_back(task);
    if (!worker_.joinable()) worker_ = std::thread(&Executor::worker_loop, this);
  }
  changed_.notify_all();
  return task;
}

void Executor::worker_loop() {
  name_this_thread("rcc-collective");
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || (!queue_.empty() && !running_); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::shared_ptr<Task> task = queue_.front();
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    Status status = task->run();
    std::string error = status == RCC_SUCCESS ? std::string() : last_error();
    lock.lock();
    task->status = status;
    task->error = std::move(error);
    task->done = true;
    task->run = nullptr;
    running_ = false;
    changed_.notify_all();
  }
}

Status Executor::wait(const std::shared_ptr<Task>& task) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return task->done; });
  if (task->status != RCC_SUCCESS) set_last_error(task->error);
  return task->status;
}

bool Executor::is_done(const std::shared_ptr<Task>& task) {
  std::lock_guard<std::mutex> guard(mutex_);
  return task->done;
}

}  // namespace rcc
