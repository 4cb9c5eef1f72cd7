#include "vector_collectives.h"

#include <cstring>
#include <vector>

#include "data.h"
#include "imbalance.h"
#include "runner_buffers.h"

namespace rccbench {
namespace {

// Rank r's block holds counts_[r] elements at displs_[r] (contiguous, in rank order), from
// Shape::block_count and --imbalance. prepare() sets them for the shape that run() and
// count_wrong() then use.
class VectorRunner : public TwoBufferRunner {
 public:
  VectorRunner(std::string name, const World& w, rcc_datatype_t d, rcc_op_t o, int r, double imbalance)
      : TwoBufferRunner(std::move(name), w, d, o, r), imbalance_(imbalance) {}
  bool per_rank_blocks() const override { return true; }
  double bus_factor() const override { return static_cast<double>(world_.ranks - 1) / world_.ranks; }

 protected:
  void set_counts(const Shape& s) {
    counts_ = imbalanced_counts(s.block_count, world_.ranks, imbalance_);
    displs_ = contiguous_displacements(counts_);
  }
  // Bytes of the largest block any rank has for this shape (buffers are sized for the largest).
  size_t max_block_bytes(const Shape& s) const {
    return max_imbalanced_count(s.block_count, imbalance_) * element_bytes();
  }
  size_t mine() const { return counts_[static_cast<size_t>(world_.rank)]; }
  size_t my_displ() const { return displs_[static_cast<size_t>(world_.rank)]; }

  double imbalance_;
  std::vector<size_t> counts_, displs_;
};

class AllgathervRunner : public VectorRunner {
 public:
  AllgathervRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r, double f)
      : VectorRunner("allgatherv", w, d, o, r, f) {}
  void prepare(const Shape& s, bool in_place) override {
    set_counts(s);
    std::memset(recv_.get(), 0, s.bytes);
    fill_payload(input(in_place), mine(), datatype_, world_.rank, 0);
  }
  rcc_status_t run(const Shape&, bool in_place) override {
    return rcc_allgatherv(world_.comm, input(in_place), mine(), recv_.get(), counts_.data(), displs_.data(), datatype_);
  }
  size_t count_wrong(const Shape&, bool) const override {
    size_t wrong = 0;
    for (int source = 0; source < world_.ranks; ++source) {
      const size_t k = static_cast<size_t>(source);
      wrong += count_wrong_payload(at(recv_.get(), displs_[k]), counts_[k], datatype_, source, 0);
    }
    return wrong;
  }

 protected:
  // In place: this rank's block already sits at its displacement in the output.
  unsigned char* input(bool in_place) const { return in_place ? at(recv_.get(), my_displ()) : send_.get(); }
  size_t send_bytes(const Shape& s) const override { return max_block_bytes(s); }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

// Rank i sends counts_[j] elements to rank j (its send buffer is laid out as a scatterv's), so
// rank j receives counts_[j] from every rank: the size column is the send side, as alltoall's.
// No in-place form: the send and receive layouts differ.
class AlltoallvRunner : public VectorRunner {
 public:
  AlltoallvRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r, double f)
      : VectorRunner("alltoallv", w, d, o, r, f) {}
  void prepare(const Shape& s, bool) override {
    set_counts(s);
    recvcounts_.assign(static_cast<size_t>(world_.ranks), mine());
    rdispls_ = contiguous_displacements(recvcounts_);
    fill_payload(send_.get(), s.count, datatype_, world_.rank, 0);
    std::memset(recv_.get(), 0, mine() * world_.ranks * element_bytes());
  }
  rcc_status_t run(const Shape&, bool) override {
    return rcc_alltoallv(world_.comm, send_.get(), counts_.data(), displs_.data(), recv_.get(), recvcounts_.data(),
                         rdispls_.data(), datatype_);
  }
  size_t count_wrong(const Shape&, bool) const override {
    size_t wrong = 0;  // block `source` holds what source sent to this rank: its elements from my_displ()
    for (int source = 0; source < world_.ranks; ++source) {
      wrong += count_wrong_payload(at(recv_.get(), rdispls_[static_cast<size_t>(source)]), mine(), datatype_, source,
                                   my_displ());
    }
    return wrong;
  }
  bool has_in_place() const override { return false; }

 protected:
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return max_block_bytes(s) * world_.ranks; }
  std::vector<size_t> recvcounts_, rdispls_;
};

class GathervRunner : public VectorRunner {
 public:
  GathervRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r, double f)
      : VectorRunner("gatherv", w, d, o, r, f) {}
  void prepare(const Shape& s, bool in_place) override {
    set_counts(s);
    std::memset(recv_.get(), 0, s.bytes);
    fill_payload(input(in_place), mine(), datatype_, world_.rank, 0);
  }
  rcc_status_t run(const Shape&, bool in_place) override {
    return rcc_gatherv(world_.comm, input(in_place), mine(), recv_.get(), counts_.data(), displs_.data(), datatype_,
                       root_);
  }
  size_t count_wrong(const Shape&, bool) const override {
    if (world_.rank != root_) return 0;
    size_t wrong = 0;
    for (int source = 0; source < world_.ranks; ++source) {
      const size_t k = static_cast<size_t>(source);
      wrong += count_wrong_payload(at(recv_.get(), displs_[k]), counts_[k], datatype_, source, 0);
    }
    return wrong;
  }
  double bus_factor() const override { return 1.0; }
  bool uses_root() const override { return true; }

 protected:
  // In place: the root's contribution already sits at its displacement in the output.
  unsigned char* input(bool in_place) const {
    return in_place && world_.rank == root_ ? at(recv_.get(), my_displ()) : send_.get();
  }
  size_t send_bytes(const Shape& s) const override { return max_block_bytes(s); }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
};

class ScattervRunner : public VectorRunner {
 public:
  ScattervRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r, double f)
      : VectorRunner("scatterv", w, d, o, r, f) {}
  void prepare(const Shape& s, bool) override {
    set_counts(s);
    if (world_.rank == root_) fill_payload(send_.get(), s.count, datatype_, root_, 0);
    std::memset(recv_.get(), 0, mine() * element_bytes());
  }
  rcc_status_t run(const Shape&, bool in_place) override {
    return rcc_scatterv(world_.comm, send_.get(), counts_.data(), displs_.data(), output(in_place), mine(), datatype_,
                        root_);
  }
  size_t count_wrong(const Shape&, bool in_place) const override {
    return count_wrong_payload(output(in_place), mine(), datatype_, root_, my_displ());
  }
  double bus_factor() const override { return 1.0; }
  bool uses_root() const override { return true; }

 protected:
  // In place: the root's own block stays where it is in the input.
  unsigned char* output(bool in_place) const {
    return in_place && world_.rank == root_ ? at(send_.get(), my_displ()) : recv_.get();
  }
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return max_block_bytes(s); }
};

// Rank r gets counts_[r] elements: the reduction of the input's block at displs_[r].
class ReduceScattervRunner : public VectorRunner {
 public:
  ReduceScattervRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r, double f)
      : VectorRunner("reduce_scatterv", w, d, o, r, f) {}
  void prepare(const Shape& s, bool in_place) override {
    set_counts(s);
    fill_reduce_input(send_.get(), s.count, datatype_, world_.rank, world_.ranks, 0, op_);
    if (!in_place) std::memset(recv_.get(), 0, mine() * element_bytes());
  }
  rcc_status_t run(const Shape&, bool in_place) override {
    return rcc_reduce_scatterv(world_.comm, send_.get(), output(in_place), counts_.data(), datatype_, op_);
  }
  size_t count_wrong(const Shape&, bool in_place) const override {
    return count_wrong_reduce(output(in_place), mine(), datatype_, world_.ranks, my_displ(), op_);
  }
  bool uses_op() const override { return true; }

 protected:
  // In place: the result lands on this rank's block of the input.
  unsigned char* output(bool in_place) const { return in_place ? at(send_.get(), my_displ()) : recv_.get(); }
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return max_block_bytes(s); }
};

// Scan (inclusive: ranks 0..r) and exscan (ranks 0..r-1; rank 0's output is undefined and not
// checked). The size column is the whole buffer, as allreduce's.
class ScanRunner : public TwoBufferRunner {
 public:
  ScanRunner(const World& w, rcc_datatype_t d, rcc_op_t o, int r, bool inclusive)
      : TwoBufferRunner(inclusive ? "scan" : "exscan", w, d, o, r), inclusive_(inclusive) {}
  void prepare(const Shape& s, bool in_place) override {
    fill_reduce_input(in_place ? recv_.get() : send_.get(), s.count, datatype_, world_.rank, world_.ranks, 0, op_);
    if (!in_place) std::memset(recv_.get(), 0, s.bytes);
  }
  rcc_status_t run(const Shape& s, bool in_place) override {
    const void* in = in_place ? recv_.get() : send_.get();
    return inclusive_ ? rcc_scan(world_.comm, in, recv_.get(), s.count, datatype_, op_)
                      : rcc_exscan(world_.comm, in, recv_.get(), s.count, datatype_, op_);
  }
  size_t count_wrong(const Shape& s, bool) const override {
    const int upto = inclusive_ ? world_.rank + 1 : world_.rank;
    if (upto == 0) return 0;
    return count_wrong_prefix(recv_.get(), s.count, datatype_, world_.ranks, upto, 0, op_);
  }
  double bus_factor() const override { return 1.0; }
  bool uses_op() const override { return true; }

 protected:
  size_t send_bytes(const Shape& s) const override { return s.bytes; }
  size_t recv_bytes(const Shape& s) const override { return s.bytes; }
  bool inclusive_;
};

}  // namespace

std::unique_ptr<CollectiveRunner> make_vector_runner(const std::string& name, const World& world,
                                                     rcc_datatype_t datatype, rcc_op_t op, int root, double imbalance) {
  if (name == "allgatherv") return std::make_unique<AllgathervRunner>(world, datatype, op, root, imbalance);
  if (name == "alltoallv") return std::make_unique<AlltoallvRunner>(world, datatype, op, root, imbalance);
  if (name == "gatherv") return std::make_unique<GathervRunner>(world, datatype, op, root, imbalance);
  if (name == "scatterv") return std::make_unique<ScattervRunner>(world, datatype, op, root, imbalance);
  if (name == "reduce_scatterv") return std::make_unique<ReduceScattervRunner>(world, datatype, op, root, imbalance);
  if (name == "scan") return std::make_unique<ScanRunner>(world, datatype, op, root, true);
  if (name == "exscan") return std::make_unique<ScanRunner>(world, datatype, op, root, false);
  return nullptr;
}

}  // namespace rccbench
