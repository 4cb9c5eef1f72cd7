#include "collectives.h"

#include <cstring>
#include <vector>

#include "data.h"
#include "runner_buffers.h"
#include "vector_collectives.h"

namespace rccbench {
namespace {

class AllreduceRunner : public TwoBufferRunner {
 public:
  AllreduceRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("allreduce", w, d, o, r) {}
  void prepare(const Shape& s, bool in_place) override {
    fill_reduce_input(in_place ? recv_.get() : send_.get(), s.count, datatype_, world_.rank, world_.ranks, 0, op_);
    if (!in_place) std::memset(recv_.get(), 0, s.bytes);
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    return rcc_allreduce(world_.comm, in_place ? recv_.get() : send_.get(), recv_.get(), s.count, datatype_, op_);
  }
  size_t count_wrong(const Shape& s, bool) const override {
    return count_wrong_reduce(recv_.get(), s.count, datatype_, world_.ranks, 0, op_);
  }
  double bus_factor() const override { return 2.0 * (world_.ranks - 1) / world_.ranks; }
  bool uses_op() const override { return true; }

 protected:
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

// The API has one buffer: out of place and in place are the same call.
class BroadcastRunner : public TwoBufferRunner {
 public:
  BroadcastRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("broadcast", w, d, o, r) {}
  void prepare(const Shape& s, bool) override {
    if (world_.rank == root_)
      fill_payload(recv_.get(), s.count, datatype_, root_, 0);
    else
      std::memset(recv_.get(), 0, s.bytes);
  }
  rcc_status_t run(const Shape& s, bool) override {
    return rcc_broadcast(world_.comm, recv_.get(), s.count, datatype_, root_);
  }
  size_t count_wrong(const Shape& s, bool) const override {
    return count_wrong_payload(recv_.get(), s.count, datatype_, root_, 0);
  }
  double bus_factor() const override { return 1.0; }
  bool uses_root() const override { return true; }

 protected:
  size_t send_bytes(const Shape&) const override { return 0; }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

class ReduceRunner : public AllreduceRunner {
 public:
  ReduceRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : AllreduceRunner(w, d, o, r) { name_ = "reduce"; }
  rcc_status_t run(const Shape& s, bool in_place) override {
    return rcc_reduce(world_.comm, in_place ? recv_.get() : send_.get(), recv_.get(), s.count, datatype_, op_, root_);
  }
  size_t count_wrong(const Shape& s, bool in_place) const override {
    return world_.rank == root_ ? AllreduceRunner::count_wrong(s, in_place) : 0;
  }
  double bus_factor() const override { return 1.0; }
  bool uses_root() const override { return true; }
};

class AllgatherRunner : public TwoBufferRunner {
 public:
  AllgatherRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("allgather", w, d, o, r) {}
  void prepare(const Shape& s, bool in_place) override {
    std::memset(recv_.get(), 0, s.bytes);
    unsigned char* mine = in_place ? block(recv_.get(), s, world_.rank) : send_.get();
    fill_payload(mine, s.block_count, datatype_, world_.rank, 0);
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    const void* send = in_place ? block(recv_.get(), s, world_.rank) : send_.get();
    return rcc_allgather(world_.comm, send, recv_.get(), s.block_count, datatype_);
  }
  size_t count_wrong(const Shape& s, bool) const override {
    size_t wrong = 0;
    for (int source = 0; source < world_.ranks; ++source) {
      wrong += count_wrong_payload(block(recv_.get(), s, source), s.block_count, datatype_, source, 0);
    }
    return wrong;
  }
  double bus_factor() const override { return static_cast<double>(world_.ranks - 1) / world_.ranks; }
  bool per_rank_blocks() const override { return true; }

 protected:
  size_t send_bytes(const Shape& s) const override { return s.block_count * element_bytes(); }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

class ReduceScatterRunner : public TwoBufferRunner {
 public:
  ReduceScatterRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r)
      : TwoBufferRunner("reduce_scatter", w, d, o, r) {}
  void prepare(const Shape& s, bool in_place) override {
    fill_reduce_input(send_.get(), s.count, datatype_, world_.rank, world_.ranks, 0, op_);
    if (!in_place) std::memset(recv_.get(), 0, s.block_count * element_bytes());
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    void* out = in_place ? block(send_.get(), s, world_.rank) : recv_.get();
    return rcc_reduce_scatter(world_.comm, send_.get(), out, s.block_count, datatype_, op_);
  }
  size_t count_wrong(const Shape& s, bool in_place) const override {
    const void* out = in_place ? block(send_.get(), s, world_.rank) : recv_.get();
    return count_wrong_reduce(out, s.block_count, datatype_, world_.ranks, world_.rank * s.block_count, op_);
  }
  double bus_factor() const override { return static_cast<double>(world_.ranks - 1) / world_.ranks; }
  bool uses_op() const override { return true; }
  bool per_rank_blocks() const override { return true; }

 protected:
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return s.block_count * element_bytes(); }
};

class AlltoallRunner : public TwoBufferRunner {
 public:
  AlltoallRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("alltoall", w, d, o, r) {}
  void prepare(const Shape& s, bool in_place) override {
    fill_payload(in_place ? recv_.get() : send_.get(), s.count, datatype_, world_.rank, 0);
    if (!in_place) std::memset(recv_.get(), 0, s.bytes);
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    return rcc_alltoall(world_.comm, in_place ? recv_.get() : send_.get(), recv_.get(), s.block_count, datatype_);
  }
  size_t count_wrong(const Shape& s, bool) const override {
    size_t wrong = 0;  // block `source` holds what source sent to this rank
    for (int source = 0; source < world_.ranks; ++source) {
      wrong += count_wrong_payload(block(recv_.get(), s, source), s.block_count, datatype_, source,
                                   world_.rank * s.block_count);
    }
    return wrong;
  }
  double bus_factor() const override { return static_cast<double>(world_.ranks - 1) / world_.ranks; }
  bool per_rank_blocks() const override { return true; }

 protected:
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

class GatherRunner : public TwoBufferRunner {
 public:
  GatherRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("gather", w, d, o, r) {}
  void prepare(const Shape& s, bool in_place) override {
    std::memset(recv_.get(), 0, s.bytes);
    fill_payload(input(s, in_place), s.block_count, datatype_, world_.rank, 0);
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    return rcc_gather(world_.comm, input(s, in_place), recv_.get(), s.block_count, datatype_, root_);
  }
  size_t count_wrong(const Shape& s, bool) const override {
    if (world_.rank != root_) return 0;
    size_t wrong = 0;
    for (int source = 0; source < world_.ranks; ++source) {
      wrong += count_wrong_payload(block(recv_.get(), s, source), s.block_count, datatype_, source, 0);
    }
    return wrong;
  }
  double bus_factor() const override { return 1.0; }
  bool uses_root() const override { return true; }
  bool per_rank_blocks() const override { return true; }

 protected:
  // In place: the root's contribution already sits in its block of the output.
  unsigned char* input(const Shape& s, bool in_place) const {
    return in_place && world_.rank == root_ ? block(recv_.get(), s, root_) : send_.get();
  }
  size_t send_bytes(const Shape& s) const override { return s.block_count * element_bytes(); }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

class ScatterRunner : public TwoBufferRunner {
 public:
  ScatterRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("scatter", w, d, o, r) {}
  void prepare(const Shape& s, bool) override {
    if (world_.rank == root_) fill_payload(send_.get(), s.count, datatype_, root_, 0);
    std::memset(recv_.get(), 0, s.block_count * element_bytes());
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    return rcc_scatter(world_.comm, send_.get(), output(s, in_place), s.block_count, datatype_, root_);
  }
  size_t count_wrong(const Shape& s, bool in_place) const override {
    return count_wrong_payload(output(s, in_place), s.block_count, datatype_, root_, world_.rank * s.block_count);
  }
  double bus_factor() const override { return 1.0; }
  bool uses_root() const override { return true; }
  bool per_rank_blocks() const override { return true; }

 protected:
  // In place: the root's own block stays where it is in the input.
  unsigned char* output(const Shape& s, bool in_place) const {
    return in_place && world_.rank == root_ ? block(send_.get(), s, root_) : recv_.get();
  }
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return s.block_count * element_bytes(); }
};

// Ring exchange: each rank sends to the next and receives from the previous one at once.
class SendrecvRunner : public TwoBufferRunner {
 public:
  SendrecvRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r) : TwoBufferRunner("sendrecv", w, d, o, r) {}
  void prepare(const Shape& s, bool) override {
    fill_payload(send_.get(), s.count, datatype_, world_.rank, 0);
    std::memset(recv_.get(), 0, s.bytes);
  }
  rcc_status_t run(const Shape& s, bool) override {
    const int next = (world_.rank + 1) % world_.ranks, previous = (world_.rank + world_.ranks - 1) % world_.ranks;
    rcc_request_t receive = nullptr, send = nullptr;
    rcc_status_t status = rcc_irecv(world_.comm, recv_.get(), s.count, datatype_, previous, kTag, &receive);
    if (status != RCC_SUCCESS) return status;
    status = rcc_isend(world_.comm, send_.get(), s.count, datatype_, next, kTag, &send);
    if (status != RCC_SUCCESS) {
      rcc_wait(receive);  // the peer's send still completes it
      return status;
    }
    rcc_status_t sent = rcc_wait(send);
    rcc_status_t received = rcc_wait(receive);
    return sent != RCC_SUCCESS ? sent : received;
  }
  size_t count_wrong(const Shape& s, bool) const override {
    return count_wrong_payload(recv_.get(), s.count, datatype_, (world_.rank + world_.ranks - 1) % world_.ranks, 0);
  }
  double bus_factor() const override { return 1.0; }
  bool has_in_place() const override { return false; }

 protected:
  static constexpr int kTag = 7;
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

}  // namespace

CollectiveRunner::CollectiveRunner(std::string name, const World& world, rcc_datatype_t datatype, rcc_op_t op, int root)
    : name_(std::move(name)), world_(world), datatype_(datatype), op_(op), root_(root) {}

Shape CollectiveRunner::shape_for(size_t requested_bytes) const {
  const size_t element = element_bytes(), parts = per_rank_blocks() ? static_cast<size_t>(world_.ranks) : 1;
  Shape shape;
  shape.block_count = requested_bytes / element / parts;
  if (shape.block_count == 0) shape.block_count = 1;
  shape.count = shape.block_count * parts;
  shape.bytes = shape.count * element;
  return shape;
}

std::unique_ptr<CollectiveRunner> make_runner(const std::string& name, const World& world, rcc_datatype_t datatype,
                                              rcc_op_t op, int root, double imbalance) {
  if (name == "allreduce") return std::make_unique<AllreduceRunner>(world, datatype, op, root);
  if (name == "broadcast") return std::make_unique<BroadcastRunner>(world, datatype, op, root);
  if (name == "reduce") return std::make_unique<ReduceRunner>(world, datatype, op, root);
  if (name == "allgather") return std::make_unique<AllgatherRunner>(world, datatype, op, root);
  if (name == "reduce_scatter") return std::make_unique<ReduceScatterRunner>(world, datatype, op, root);
  if (name == "alltoall") return std::make_unique<AlltoallRunner>(world, datatype, op, root);
  if (name == "gather") return std::make_unique<GatherRunner>(world, datatype, op, root);
  if (name == "scatter") return std::make_unique<ScatterRunner>(world, datatype, op, root);
  if (name == "sendrecv") return std::make_unique<SendrecvRunner>(world, datatype, op, root);
  return make_vector_runner(name, world, datatype, op, root, imbalance);
}

}  // namespace rccbench
