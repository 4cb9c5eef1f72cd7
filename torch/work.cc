#include "work.h"

#include <ATen/core/jit_type.h>

#include <thread>

#include "types.h"

namespace rcc_torch {

CollectiveWork::CollectiveWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

bool CollectiveWork::wait(std::chrono::milliseconds timeout) {
  // This group's worker holds nothing but this job: a job is held only when the queue is empty,
  // and a later one queued behind releases it.
  if (std::shared_ptr<Worker> worker = worker_.lock()) {
    Worker::release_held_jobs(worker.get());
    worker->run_if_next(this);
  }
  return c10d::Work::wait(timeout);
}

bool CollectiveWork::isCompleted() {
  Worker::release_held_jobs(nullptr);
  return c10d::Work::isCompleted();
}

c10::intrusive_ptr<c10::ivalue::Future> CollectiveWork::getFuture() {
  Worker::release_held_jobs(nullptr);
  return future_;
}

void CollectiveWork::complete(std::exception_ptr error) {
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

PointToPointWork::PointToPointWork(int rank, c10d::OpType type, rcc_request_t request, at::Tensor buffer,
                                   at::Tensor target)
    : c10d::Work(rank, type), request_(request), buffer_(std::move(buffer)), target_(std::move(target)) {}

PointToPointWork::~PointToPointWork() {
  // A request nobody waited for still owns the buffer's memory (kept alive here) until it is done.
  if (request_ != nullptr) rcc_wait(request_);
}

void PointToPointWork::settle(rcc_status_t status, const rcc_msg_info_t& info) {
  request_ = nullptr;
  info_ = info;
  std::exception_ptr error;
  if (status != RCC_SUCCESS) {
    try {
      check(status, opType_ == c10d::OpType::SEND ? "send" : "recv");
    } catch (...) {
      error = std::current_exception();
    }
  } else if (target_.defined()) {
    target_.copy_(buffer_);
  }
  completed_ = true;
  exception_ = error;
  cv_.notify_all();
}

bool PointToPointWork::isCompleted() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (completed_) return true;
  int done = 0;
  rcc_msg_info_t info{};
  const rcc_status_t status = rcc_test_info(request_, &done, &info);
  if (done != 0 || status != RCC_SUCCESS) settle(status, info);
  return completed_;
}

bool PointToPointWork::isSuccess() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ && !exception_;
}

bool PointToPointWork::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!completed_) {
    rcc_msg_info_t info{};
    if (timeout == ::kNoTimeout) {
      const rcc_status_t status = rcc_wait_info(request_, &info);
      settle(status, info);
    } else {
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      while (!completed_) {
        int done = 0;
        const rcc_status_t status = rcc_test_info(request_, &done, &info);
        if (done != 0 || status != RCC_SUCCESS) {
          settle(status, info);
          break;
        }
        TORCH_CHECK(std::chrono::steady_clock::now() < deadline,
                    "the rcc backend: ", opType_ == c10d::OpType::SEND ? "send" : "recv", " timed out after ",
                    timeout.count(), " ms");
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      }
    }
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

int PointToPointWork::sourceRank() const {
  std::lock_guard<std::mutex> lock(mutex_);
  TORCH_CHECK(completed_, "the rcc backend: sourceRank() of a receive that has not completed");
  return info_.source;
}

}  // namespace rcc_torch
