// Allgather, ring: P-1 steps, each forwarding the block received in the previous one.
// In place when sendbuf == recvbuf + rank * sendcount elements (as NCCL).
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status allgather_ring(Context& ctx, const Args& args) {
  const size_t element = rcc_datatype_size(args.datatype);
  const BlockLayout layout = BlockLayout::equal(args.count, ctx.size());
  uint8_t* own = at(args.recvbuf, layout.offset(ctx.rank()), element);
  if (own != args.sendbuf) std::memmove(own, args.sendbuf, args.count * element);
  return ring_allgather(ctx, args.recvbuf, layout, element, 0);
}

double allgather_ring_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kAllgatherRing;
const AlgorithmRow kAllgatherRing{Kind::kAllgather, "ring", "", allgather_ring, allgather_ring_cost, Needs::kMessages};

}  // namespace rcc::collectives
