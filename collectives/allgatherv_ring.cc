// Allgatherv, ring: the ring allgather over the given blocks, straight in the receive buffer
// (each rank's displacements are its own; the counts agree). Only the blocks are written, so the
// gaps between them stay as they were.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status allgatherv_ring(Context& ctx, const Args& args) {
  const size_t element = rcc_datatype_size(args.datatype);
  const int rank = ctx.rank();
  uint8_t* own = at(args.recvbuf, args.rdispls[rank], element);
  // An empty block may come from a NULL buffer: no copy at all then.
  if (own != args.sendbuf && args.recvcounts[rank] > 0)
    std::memmove(own, args.sendbuf, args.recvcounts[rank] * element);
  const BlockLayout layout = BlockLayout::given(args.recvcounts, args.rdispls, ctx.size());
  return ring_allgather(ctx, args.recvbuf, layout, element, 0);
}

double allgatherv_ring_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes / ranks, ranks); }

}  // namespace

extern const AlgorithmRow kAllgathervRing;
const AlgorithmRow kAllgathervRing{Kind::kAllgatherv,    "ring",          "", allgatherv_ring,
                                   allgatherv_ring_cost, Needs::kMessages};

}  // namespace rcc::collectives
