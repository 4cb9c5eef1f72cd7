#include "process_group.h"

#include <ATen/MemoryOverlap.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>

#include "types.h"

namespace rcc_torch {
namespace {

// The world group's communicator, which later groups are made from (torch creates the default
// group first and destroys it last), and the one init_world made for the default group to take.
std::mutex g_world_mutex;
rcc_comm_t g_world = nullptr;
std::shared_ptr<StoreBridge> g_world_store;  // the world's rendezvous store, for its groups to keep
rcc_comm_t g_pending_world = nullptr;

void check_cpu(const at::Tensor& tensor, const char* what) {
  TORCH_CHECK(tensor.device().is_cpu(), "the rcc backend takes CPU tensors; ", what, " is on ", tensor.device());
}

const at::Tensor& only(const std::vector<at::Tensor>& tensors, const char* what) {
  TORCH_CHECK(tensors.size() == 1, "the rcc backend takes one tensor per call for ", what, ", got ", tensors.size());
  check_cpu(tensors[0], what);
  return tensors[0];
}

// Every tensor of a coalesced call on the CPU and of one dtype.
void check_one_dtype(const std::vector<at::Tensor>& tensors, const char* what) {
  TORCH_CHECK(!tensors.empty(), "the rcc backend: ", what, " of no tensors");
  for (const at::Tensor& t : tensors) {
    check_cpu(t, what);
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "the rcc backend: ", what, " needs one dtype, got ",
                t.scalar_type(), " and ", tensors[0].scalar_type());
  }
}

// An input sharing memory with its operation's output (all_gather_into_tensor from the output's
// own block, reduce_scatter_tensor into the input's, all_to_all_single(t, t)), read into a copy
// when issued: rcc's send and receive buffers must not overlap.
at::Tensor apart_from(const at::Tensor& input, const at::Tensor& output) {
  return at::get_overlap_status(input, output) == at::MemOverlapStatus::No ? input : input.clone();
}

// A tensor rcc may read and write: the tensor itself when contiguous, else a contiguous copy that
// goes back into it (done()).
struct Staged {
  explicit Staged(const at::Tensor& tensor)
      : buffer(tensor.is_contiguous() ? tensor : tensor.contiguous()),
        target(tensor.is_contiguous() ? at::Tensor() : tensor) {}
  void* data() const { return buffer.data_ptr(); }
  size_t count() const { return static_cast<size_t>(buffer.numel()); }
  void done() const {
    if (target.defined()) target.copy_(buffer);
  }
  at::Tensor buffer;
  at::Tensor target;
};

// One flat buffer of every tensor in order (what list forms send), and putting one back.
at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors) {
  int64_t at = 0;
  for (at::Tensor& t : tensors) {
    t.copy_(flat.narrow(0, at, t.numel()).view_as(t));
    at += t.numel();
  }
}

void check_same(const at::Tensor& tensor, const at::Tensor& like, const char* what) {
  check_cpu(tensor, what);
  TORCH_CHECK(tensor.scalar_type() == like.scalar_type(), "the rcc backend: ", what, " is ", tensor.scalar_type(),
              ", the input ", like.scalar_type());
  TORCH_CHECK(tensor.numel() == like.numel(), "the rcc backend: ", what, " has ", tensor.numel(),
              " elements, the input ", like.numel());
}

// Element counts and displacements of blocks split along dim 0 (equal blocks when splits is empty).
void blocks(const at::Tensor& tensor, const std::vector<int64_t>& splits, int size, std::vector<size_t>* counts,
            std::vector<size_t>* displs, const char* what) {
  counts->assign(static_cast<size_t>(size), 0);
  displs->assign(static_cast<size_t>(size), 0);
  const int64_t rows = tensor.dim() == 0 ? 1 : tensor.size(0);
  const int64_t row = rows == 0 ? 0 : tensor.numel() / rows;
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "the rcc backend: ", what, "'s first dimension (", rows, ") does not divide into ",
                size, " equal blocks");
    for (int r = 0; r < size; ++r) (*counts)[static_cast<size_t>(r)] = static_cast<size_t>(rows / size * row);
  } else {
    TORCH_CHECK(static_cast<int>(splits.size()) == size, "the rcc backend: ", what, " split sizes have ", splits.size(),
                " entries for ", size, " ranks");
    int64_t total = 0;
    for (int r = 0; r < size; ++r) {
      TORCH_CHECK(splits[static_cast<size_t>(r)] >= 0, "the rcc backend: ", what, " split size ", r, " is negative");
      (*counts)[static_cast<size_t>(r)] = static_cast<size_t>(splits[static_cast<size_t>(r)] * row);
      total += splits[static_cast<size_t>(r)];
    }
    TORCH_CHECK(total == rows, "the rcc backend: ", what, " split sizes add up to ", total, ", not to ", rows);
  }
  for (int r = 1; r < size; ++r) {
    (*displs)[static_cast<size_t>(r)] = (*displs)[static_cast<size_t>(r - 1)] + (*counts)[static_cast<size_t>(r - 1)];
  }
}

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> ProcessGroupRcc::create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                               int size, double timeout_s,
                                                               const std::vector<int64_t>& global_ranks,
                                                               const std::string& group_id) {
  if (global_ranks.empty()) {
    rcc_comm_t pending = nullptr;  // init_method="rcc://": the job rcc_comm_init found
    {
      std::lock_guard<std::mutex> lock(g_world_mutex);
      std::swap(pending, g_pending_world);
    }
    if (pending != nullptr) {
      int my_rank = -1, my_size = 0;
      rcc_comm_rank(pending, &my_rank);
      rcc_comm_size(pending, &my_size);
      if (my_rank != rank || my_size != size) rcc_comm_destroy(pending);
      TORCH_CHECK(my_rank == rank && my_size == size, "the rcc backend: torch says rank ", rank, " of ", size,
                  ", rcc's job rank ", my_rank, " of ", my_size);
      return c10::make_intrusive<ProcessGroupRcc>(rank, size, pending, nullptr, true);
    }
    // The timeout given to init_process_group bounds every wait, unless RCC_TIMEOUT says otherwise.
    if (std::getenv("RCC_TIMEOUT") == nullptr && timeout_s > 0) {
      setenv("RCC_TIMEOUT", std::to_string(std::max<int64_t>(1, std::llround(timeout_s))).c_str(), 0);
    }
    auto bridge = std::make_shared<StoreBridge>(store);
    rcc_comm_t comm = nullptr;
    check(rcc_comm_init_store(&comm, bridge->callbacks(), rank, size), "init (rcc_comm_init_store)");
    return c10::make_intrusive<ProcessGroupRcc>(rank, size, comm, std::move(bridge), true);
  }
  std::lock_guard<std::mutex> lock(g_world_mutex);
  TORCH_CHECK(g_world != nullptr, "the rcc backend: a new group needs the default group to exist");
  TORCH_CHECK(static_cast<int>(global_ranks.size()) == size, "the rcc backend: ", global_ranks.size(),
              " global ranks for a group of ", size);
  std::vector<int> ranks(global_ranks.begin(), global_ranks.end());
  // Groups are numbered alike on every rank (torch's group names count them): a tag per group.
  char* end = nullptr;
  const long number = std::strtol(group_id.c_str(), &end, 10);
  const int tag = end != group_id.c_str() && *end == '\0' && number >= 0
                      ? static_cast<int>(number % (1 << 30))
                      : static_cast<int>(std::hash<std::string>{}(group_id) % (1 << 30));
  rcc_comm_t comm = nullptr;
  check(rcc_comm_create_group(g_world, ranks.data(), size, tag, &comm), "new_group (rcc_comm_create_group)");
  int my_rank = -1;
  rcc_comm_rank(comm, &my_rank);
  TORCH_CHECK(my_rank == rank, "the rcc backend: torch says group rank ", rank, ", rcc ", my_rank);
  return c10::make_intrusive<ProcessGroupRcc>(rank, size, comm, g_world_store, false);
}

std::pair<int, int> ProcessGroupRcc::init_world() {
  std::lock_guard<std::mutex> lock(g_world_mutex);
  TORCH_CHECK(g_pending_world == nullptr, "the rcc backend: rcc:// rendezvous twice without init_process_group");
  rcc_comm_t comm = nullptr;
  check(rcc_comm_init(&comm), "rcc:// rendezvous (rcc_comm_init)");
  int rank = -1, size = 0;
  rcc_comm_rank(comm, &rank);
  rcc_comm_size(comm, &size);
  g_pending_world = comm;
  return {rank, size};
}

std::string ProcessGroupRcc::broadcast_from_rank0(const std::string& text) {
  std::lock_guard<std::mutex> lock(g_world_mutex);
  TORCH_CHECK(g_pending_world != nullptr, "the rcc backend: no rcc:// rendezvous in progress");
  uint64_t length = text.size();
  check(rcc_broadcast(g_pending_world, &length, 1, RCC_UINT64, 0), "rcc:// rendezvous (broadcast)");
  std::string received(length, '\0');
  if (length > 0) {
    int rank = -1;
    rcc_comm_rank(g_pending_world, &rank);
    if (rank == 0) received = text;
    check(rcc_broadcast(g_pending_world, received.data(), length, RCC_UINT8, 0), "rcc:// rendezvous (broadcast)");
  }
  return received;
}

ProcessGroupRcc::ProcessGroupRcc(int rank, int size, rcc_comm_t comm, std::shared_ptr<StoreBridge> store, bool world)
    : c10d::ProcessGroup(rank, size), store_(std::move(store)), comm_(comm), world_(world) {
  const rcc_status_t status = rcc_comm_dup(comm_, &p2p_comm_);
  if (status != RCC_SUCCESS) {
    rcc_comm_destroy(comm_);
    check(status, "init (rcc_comm_dup)");
  }
  if (world_) {
    std::lock_guard<std::mutex> lock(g_world_mutex);
    g_world = comm_;
    g_world_store = store_;
  }
  worker_ = std::make_shared<Worker>();
}

ProcessGroupRcc::~ProcessGroupRcc() {
  worker_->stop();
  if (world_) {
    std::lock_guard<std::mutex> lock(g_world_mutex);
    if (g_world == comm_) {
      g_world = nullptr;
      g_world_store.reset();
    }
  }
  rcc_comm_destroy(p2p_comm_);
  rcc_comm_destroy(comm_);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::launch(c10d::OpType type, std::vector<at::Tensor> outputs,
                                                       std::function<void()> body) {
  size_t bytes = 0;
  for (const at::Tensor& t : outputs) bytes += static_cast<size_t>(t.numel()) * t.element_size();
  auto work = c10::make_intrusive<CollectiveWork>(rank_, type, std::move(outputs));
  std::function<void()> job = [work, body = std::move(body)] {
    try {
      body();
      work->complete(nullptr);
    } catch (...) {
      work->complete(std::current_exception());
    }
  };
  // Another group's held job may be what a peer needs before it joins this one.
  Worker::release_held_jobs(worker_.get());
  work->queued_on(worker_);
  // Small collectives take microseconds: held for the caller's wait when the worker is idle (two
  // thread hand-offs cost tens of microseconds); larger ones overlap with the caller's computing.
  if (bytes > kInlineBytes || !worker_->hold_if_idle(std::move(job), work.get())) {
    worker_->enqueue(std::move(job), work.get());  // not moved from: hold_if_idle took nothing
  }
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::broadcast(std::vector<at::Tensor>& tensors,
                                                          const c10d::BroadcastOptions& opts) {
  const at::Tensor& tensor = only(tensors, "broadcast");
  const rcc_datatype_t type = datatype_of(tensor);
  const int root = static_cast<int>(opts.rootRank);
  Staged staged(tensor);
  return launch(c10d::OpType::BROADCAST, tensors, [this, staged, type, root] {
    check(rcc_broadcast(comm_, staged.data(), staged.count(), type, root), "broadcast");
    staged.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::allreduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::AllreduceOptions& opts) {
  const at::Tensor& tensor = only(tensors, "all_reduce");
  const rcc_datatype_t type = datatype_of(tensor);
  const rcc_op_t op = reduction(opts.reduceOp, tensor);
  Staged staged(tensor);
  return launch(c10d::OpType::ALLREDUCE, tensors, [this, staged, type, op] {
    check(rcc_allreduce(comm_, staged.data(), staged.data(), staged.count(), type, op), "all_reduce");
    staged.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                    const c10d::AllreduceCoalescedOptions& opts) {
  check_one_dtype(tensors, "all_reduce_coalesced");
  const rcc_datatype_t type = datatype_of(tensors[0]);
  const rcc_op_t op = reduction(opts.reduceOp, tensors[0]);
  return launch(c10d::OpType::ALLREDUCE_COALESCED, tensors, [this, tensors, type, op]() mutable {
    at::Tensor flat = flatten(tensors);
    check(rcc_allreduce(comm_, flat.data_ptr(), flat.data_ptr(), static_cast<size_t>(flat.numel()), type, op),
          "all_reduce_coalesced");
    unflatten(flat, tensors);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::reduce(std::vector<at::Tensor>& tensors,
                                                       const c10d::ReduceOptions& opts) {
  const at::Tensor& tensor = only(tensors, "reduce");
  const rcc_datatype_t type = datatype_of(tensor);
  const rcc_op_t op = reduction(opts.reduceOp, tensor);
  const int root = static_cast<int>(opts.rootRank);
  Staged staged(tensor);
  return launch(c10d::OpType::REDUCE, tensors, [this, staged, type, op, root] {
    check(rcc_reduce(comm_, staged.data(), staged.data(), staged.count(), type, op, root), "reduce");
    staged.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllgatherOptions&) {
  const at::Tensor& input = only(inputs, "all_gather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "the rcc backend: all_gather needs one list of ", size_, " output tensors");
  for (const at::Tensor& t : outputs[0]) check_same(t, input, "an all_gather output");
  const rcc_datatype_t type = datatype_of(input);
  Staged staged(input);
  std::vector<at::Tensor> targets = outputs[0];
  return launch(c10d::OpType::ALLGATHER, targets, [this, staged, targets, type]() mutable {
    at::Tensor flat = at::empty({static_cast<int64_t>(staged.count()) * size_}, staged.buffer.options());
    check(rcc_allgather(comm_, staged.data(), flat.data_ptr(), staged.count(), type), "all_gather");
    unflatten(flat, targets);
  });
}

// outputs[r][i] gets rank r's inputs[i]: one all_gather of every input end to end.
c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                                    std::vector<at::Tensor>& inputs,
                                                                    const c10d::AllgatherOptions&) {
  check_one_dtype(inputs, "all_gather_coalesced");
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_, "the rcc backend: all_gather_coalesced needs ", size_,
              " output lists, got ", outputs.size());
  std::vector<at::Tensor> targets;
  for (const std::vector<at::Tensor>& list : outputs) {
    TORCH_CHECK(list.size() == inputs.size(), "the rcc backend: all_gather_coalesced needs ", inputs.size(),
                " tensors in each output list, got ", list.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      check_same(list[i], inputs[i], "an all_gather_coalesced output");
      targets.push_back(list[i]);
    }
  }
  const rcc_datatype_t type = datatype_of(inputs[0]);
  return launch(c10d::OpType::ALLGATHER_COALESCED, targets, [this, inputs, targets, type]() mutable {
    at::Tensor in = flatten(inputs);
    at::Tensor out = at::empty({in.numel() * size_}, in.options());
    check(rcc_allgather(comm_, in.data_ptr(), out.data_ptr(), static_cast<size_t>(in.numel()), type),
          "all_gather_coalesced");
    unflatten(out, targets);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                const c10d::AllgatherOptions&) {
  check_cpu(input, "the _allgather_base input");
  check_cpu(output, "the _allgather_base output");
  TORCH_CHECK(output.numel() == input.numel() * size_ && output.scalar_type() == input.scalar_type(),
              "the rcc backend: _allgather_base needs an output of ", size_, " x the input");
  const rcc_datatype_t type = datatype_of(input);
  Staged in(apart_from(input, output)), out(output);
  return launch(c10d::OpType::_ALLGATHER_BASE, {output}, [this, in, out, type] {
    check(rcc_allgather(comm_, in.data(), out.data(), in.count(), type), "_allgather_base");
    out.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                       std::vector<at::Tensor>& inputs,
                                                       const c10d::GatherOptions& opts) {
  const at::Tensor& input = only(inputs, "gather");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> targets;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "the rcc backend: gather needs one list of ", size_, " output tensors at the root");
    for (const at::Tensor& t : outputs[0]) check_same(t, input, "a gather output");
    targets = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || outputs[0].empty(), "the rcc backend: gather outputs are for the root only");
  }
  const rcc_datatype_t type = datatype_of(input);
  Staged staged(input);
  return launch(c10d::OpType::GATHER, targets, [this, staged, targets, type, root]() mutable {
    at::Tensor flat;
    if (rank_ == root) flat = at::empty({static_cast<int64_t>(staged.count()) * size_}, staged.buffer.options());
    check(rcc_gather(comm_, staged.data(), rank_ == root ? flat.data_ptr() : nullptr, staged.count(), type, root),
          "gather");
    if (rank_ == root) unflatten(flat, targets);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::scatter(std::vector<at::Tensor>& outputs,
                                                        std::vector<std::vector<at::Tensor>>& inputs,
                                                        const c10d::ScatterOptions& opts) {
  const at::Tensor& output = only(outputs, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> sources;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "the rcc backend: scatter needs one list of ", size_, " input tensors at the root");
    for (const at::Tensor& t : inputs[0]) check_same(t, output, "a scatter input");
    sources = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || inputs[0].empty(), "the rcc backend: scatter inputs are for the root only");
  }
  const rcc_datatype_t type = datatype_of(output);
  Staged staged(output);
  return launch(c10d::OpType::SCATTER, outputs, [this, staged, sources, type, root] {
    at::Tensor flat;
    if (rank_ == root) flat = flatten(sources);
    check(rcc_scatter(comm_, rank_ == root ? flat.data_ptr() : nullptr, staged.data(), staged.count(), type, root),
          "scatter");
    staged.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                               std::vector<std::vector<at::Tensor>>& inputs,
                                                               const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& output = only(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "the rcc backend: reduce_scatter needs one list of ", size_, " input tensors");
  for (const at::Tensor& t : inputs[0]) check_same(t, output, "a reduce_scatter input");
  const rcc_datatype_t type = datatype_of(output);
  const rcc_op_t op = reduction(opts.reduceOp, output);
  Staged staged(output);
  std::vector<at::Tensor> sources = inputs[0];
  return launch(c10d::OpType::REDUCE_SCATTER, outputs, [this, staged, sources, type, op] {
    at::Tensor flat = flatten(sources);
    check(rcc_reduce_scatter(comm_, flat.data_ptr(), staged.data(), staged.count(), type, op), "reduce_scatter");
    staged.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                     const c10d::ReduceScatterOptions& opts) {
  check_cpu(input, "the _reduce_scatter_base input");
  check_cpu(output, "the _reduce_scatter_base output");
  TORCH_CHECK(input.numel() == output.numel() * size_ && output.scalar_type() == input.scalar_type(),
              "the rcc backend: _reduce_scatter_base needs an input of ", size_, " x the output");
  const rcc_datatype_t type = datatype_of(output);
  const rcc_op_t op = reduction(opts.reduceOp, output);
  Staged in(apart_from(input, output)), out(output);
  return launch(c10d::OpType::_REDUCE_SCATTER_BASE, {output}, [this, in, out, type, op] {
    check(rcc_reduce_scatter(comm_, in.data(), out.data(), out.count(), type, op), "_reduce_scatter_base");
    out.done();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                              std::vector<int64_t>& output_splits,
                                                              std::vector<int64_t>& input_splits,
                                                              const c10d::AllToAllOptions&) {
  check_cpu(input, "the all_to_all_single input");
  check_cpu(output, "the all_to_all_single output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "the rcc backend: all_to_all_single output is ",
              output.scalar_type(), ", the input ", input.scalar_type());
  const rcc_datatype_t type = datatype_of(input);
  std::vector<size_t> send_counts, send_displs, recv_counts, recv_displs;
  blocks(input, input_splits, size_, &send_counts, &send_displs, "the all_to_all_single input");
  blocks(output, output_splits, size_, &recv_counts, &recv_displs, "the all_to_all_single output");
  Staged in(apart_from(input, output)), out(output);
  return launch(c10d::OpType::ALLTOALL_BASE, {output},
                [this, in, out, type, send_counts, send_displs, recv_counts, recv_displs] {
                  check(rcc_alltoallv(comm_, in.data(), send_counts.data(), send_displs.data(), out.data(),
                                      recv_counts.data(), recv_displs.data(), type),
                        "all_to_all_single");
                  out.done();
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::alltoall(std::vector<at::Tensor>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::AllToAllOptions&) {
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_,
              "the rcc backend: all_to_all needs ", size_, " input and ", size_, " output tensors");
  for (const at::Tensor& t : inputs) check_cpu(t, "an all_to_all input");
  for (const at::Tensor& t : outputs) {
    check_cpu(t, "an all_to_all output");
    TORCH_CHECK(t.scalar_type() == inputs[0].scalar_type(), "the rcc backend: all_to_all needs one dtype");
  }
  const rcc_datatype_t type = datatype_of(inputs[0]);
  std::vector<size_t> send_counts, send_displs(static_cast<size_t>(size_), 0), recv_counts,
      recv_displs(static_cast<size_t>(size_), 0);
  for (int r = 0; r < size_; ++r) {
    TORCH_CHECK(inputs[static_cast<size_t>(r)].scalar_type() == inputs[0].scalar_type(),
                "the rcc backend: all_to_all needs one dtype");
    send_counts.push_back(static_cast<size_t>(inputs[static_cast<size_t>(r)].numel()));
    recv_counts.push_back(static_cast<size_t>(outputs[static_cast<size_t>(r)].numel()));
    if (r > 0) {
      send_displs[static_cast<size_t>(r)] =
          send_displs[static_cast<size_t>(r - 1)] + send_counts[static_cast<size_t>(r - 1)];
      recv_displs[static_cast<size_t>(r)] =
          recv_displs[static_cast<size_t>(r - 1)] + recv_counts[static_cast<size_t>(r - 1)];
    }
  }
  return launch(c10d::OpType::ALLTOALL, outputs,
                [this, inputs, outputs, type, send_counts, send_displs, recv_counts, recv_displs]() mutable {
                  at::Tensor in = flatten(inputs);
                  int64_t total = 0;
                  for (const at::Tensor& t : outputs) total += t.numel();
                  at::Tensor out = at::empty({total}, in.options());
                  check(rcc_alltoallv(comm_, in.data_ptr(), send_counts.data(), send_displs.data(), out.data_ptr(),
                                      recv_counts.data(), recv_displs.data(), type),
                        "all_to_all");
                  unflatten(out, outputs);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::barrier(const c10d::BarrierOptions&) {
  return launch(c10d::OpType::BARRIER, {}, [this] { check(rcc_barrier(comm_), "barrier"); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::post_p2p(c10d::OpType type, std::vector<at::Tensor>& tensors, int peer,
                                                         int tag) {
  const at::Tensor& tensor = only(tensors, type == c10d::OpType::SEND ? "send" : "recv");
  const rcc_datatype_t datatype = datatype_of(tensor);
  Staged staged(tensor);
  Worker::release_held_jobs(nullptr);  // the peer may need a held collective before this message
  rcc_request_t request = nullptr;
  if (type == c10d::OpType::SEND) {
    check(rcc_isend(p2p_comm_, staged.data(), staged.count(), datatype, peer, tag, &request), "send");
  } else {
    check(rcc_irecv(p2p_comm_, staged.data(), staged.count(), datatype, peer, tag, &request), "recv");
  }
  // A send's stand-in needs no copying back.
  return c10::make_intrusive<PointToPointWork>(rank_, type, request, staged.buffer,
                                               type == c10d::OpType::SEND ? at::Tensor() : staged.target);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  return post_p2p(c10d::OpType::SEND, tensors, dst, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  return post_p2p(c10d::OpType::RECV, tensors, src, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupRcc::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  return post_p2p(c10d::OpType::RECVANYSOURCE, tensors, RCC_ANY_SOURCE, tag);
}

}  // namespace rcc_torch
