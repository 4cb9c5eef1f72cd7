// The Work objects the rcc process group hands torch: a collective's, finished by the group's
// worker thread and carrying a future (what DDP's communication hooks chain on), and a point-to-point
// operation's, which is an rcc request waited for or tested by whoever asks.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <rcc/rcc.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <vector>

#include "worker.h"

namespace rcc_torch {

class CollectiveWork final : public c10d::Work {
 public:
  CollectiveWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);
  // Before the job is queued or held on the group's worker under this object's address.
  void queued_on(std::weak_ptr<Worker> worker) { worker_ = std::move(worker); }
  // Both release a held job to the worker first: whoever polls or chains on a future waits for
  // the worker to run it.
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  bool isCompleted() override;
  // Runs the job on the caller's thread if the worker has not started it and nothing is ahead of
  // it (a blocking call: torch waits right after issuing it), then waits as c10d::Work does. Other
  // groups' held jobs go to their workers first (a peer may need one of them to reach this one).
  bool wait(std::chrono::milliseconds timeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  // From the worker: completes the work and its future (with the outputs, or the error).
  void complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::weak_ptr<Worker> worker_;  // empty unless queued; the group may be gone before its works are
};

class PointToPointWork final : public c10d::Work {
 public:
  // buffer: what the request reads or writes; target: when set, where a received buffer goes on
  // completion (buffer is a contiguous stand-in for it).
  PointToPointWork(int rank, c10d::OpType type, rcc_request_t request, at::Tensor buffer, at::Tensor target);
  ~PointToPointWork() override;
  bool isCompleted() override;
  bool isSuccess() const override;
  bool wait(std::chrono::milliseconds timeout) override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override { return {target_.defined() ? target_ : buffer_}; }

 private:
  // Under mutex_, once the request is done.
  void settle(rcc_status_t status, const rcc_msg_info_t& info);

  rcc_request_t request_;  // null once settled
  at::Tensor buffer_;
  at::Tensor target_;
  rcc_msg_info_t info_{};
};

}  // namespace rcc_torch
