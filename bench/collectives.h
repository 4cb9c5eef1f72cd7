// One runner per collective: the buffers and counts for a size, the call itself (out of place or
// in place), the inputs, the check of the output, and nccl-tests' bus bandwidth factor. The
// vector collectives and the scans are in vector_collectives.h.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "exchange.h"
#include "rcc/rcc.h"

namespace rccbench {

struct Shape {
  size_t bytes = 0;        // the "size" column: nccl-tests' total bytes
  size_t count = 0;        // the "count" column: elements in those bytes
  size_t block_count = 0;  // count passed to the call (per rank for gather-like collectives)
};

class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  // The shape nearest requested_bytes (rounded down to whole per-rank blocks, at least one element).
  virtual Shape shape_for(size_t requested_bytes) const;
  // Allocates buffers for the largest shape the run uses.
  virtual rcc_status_t reserve(const Shape& largest) = 0;
  // Writes this rank's inputs (and clears outputs) for one check run.
  virtual void prepare(const Shape& shape, bool in_place) = 0;
  virtual rcc_status_t run(const Shape& shape, bool in_place) = 0;
  // Wrong elements of this rank's output after prepare + run.
  virtual size_t count_wrong(const Shape& shape, bool in_place) const = 0;
  virtual double bus_factor() const = 0;
  virtual bool has_in_place() const { return true; }
  virtual bool uses_op() const { return false; }
  virtual bool uses_root() const { return false; }
  // Whether the size splits into one block per rank (allgather, alltoall, ...).
  virtual bool per_rank_blocks() const { return false; }
  const std::string& name() const { return name_; }

 protected:
  CollectiveRunner(std::string name, const World& world, rcc_datatype_t datatype, rcc_op_t op, int root);
  size_t element_bytes() const { return rcc_datatype_size(datatype_); }

  std::string name_;
  World world_;
  rcc_datatype_t datatype_;
  rcc_op_t op_;
  int root_;
};

// Null for a name that is not a sized collective (barrier and the p2p modes are run elsewhere).
// imbalance: --imbalance of the vector collectives' counts (imbalance.h); the others ignore it.
std::unique_ptr<CollectiveRunner> make_runner(const std::string& name, const World& world, rcc_datatype_t datatype,
                                              rcc_op_t op, int root, double imbalance = 0);

}  // namespace rccbench
