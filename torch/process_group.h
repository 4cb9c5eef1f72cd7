// torch.distributed's process group on rcc (backend "rcc"). The world group meets through the
// store torch hands it (rcc_comm_init_store: rcc opens no port of its own for the rendezvous); a
// group made by new_group is a communicator of the world's ranks that shares its connections
// (rcc_comm_create_group). Collectives run on the group's worker thread in the order issued and
// complete a Work with a future; point-to-point operations are rcc requests, posted at once on a
// communicator of their own. CPU tensors only; a non-contiguous tensor goes through a contiguous
// copy, as with gloo.
#pragma once

#include <ATen/ATen.h>
#include <rcc/rcc.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store_bridge.h"
#include "work.h"
#include "worker.h"

namespace rcc_torch {

class ProcessGroupRcc final : public c10d::ProcessGroup {
 public:
  // global_ranks empty: the world group (the default one), which every later group comes from;
  // otherwise the world's ranks of a new group, in group rank order. group_id: torch's name of the
  // group, the same on every rank (it numbers groups).
  static c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                       double timeout_s, const std::vector<int64_t>& global_ranks,
                                                       const std::string& group_id);
  // For init_method="rcc://": the job as rcc finds it (rcc_comm_init: rccrun, srun, mpirun,
  // torchrun), kept for the default group that torch creates next. Returns its rank and size.
  static std::pair<int, int> init_world();
  // Rank 0's text on every rank, through the communicator init_world made.
  static std::string broadcast_from_rank0(const std::string& text);

  // store: the world's rendezvous store, shared by every group of the job (the job's last
  // communicator meets the others through it, whichever group that is).
  ProcessGroupRcc(int rank, int size, rcc_comm_t comm, std::shared_ptr<StoreBridge> store, bool world);
  ~ProcessGroupRcc() override;

  const std::string getBackendName() const override { return "rcc"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits, std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;

 private:
  // Queues body (blocking rcc calls on comm_) on the worker; the Work completes with outputs when
  // it returns, or with its exception.
  c10::intrusive_ptr<c10d::Work> launch(c10d::OpType type, std::vector<at::Tensor> outputs, std::function<void()> body);
  // Collectives up to this many bytes are held for the caller's wait when the worker is idle.
  static constexpr size_t kInlineBytes = 64 << 10;
  c10::intrusive_ptr<c10d::Work> post_p2p(c10d::OpType type, std::vector<at::Tensor>& tensors, int peer, int tag);

  std::shared_ptr<StoreBridge> store_;  // the job's rendezvous store (null under rcc://)
  rcc_comm_t comm_ = nullptr;           // collectives, on the worker
  rcc_comm_t p2p_comm_ = nullptr;       // point-to-point, from the callers' threads
  bool world_ = false;
  std::shared_ptr<Worker> worker_;  // last: stopped first (works hold it weakly)
};

}  // namespace rcc_torch
