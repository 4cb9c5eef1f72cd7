// Reduce-scatter, ring: P-1 steps; rank r ends with block r (recvcount elements) reduced.
// In place when recvbuf == sendbuf + rank * recvcount elements (as NCCL).
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status reduce_scatter_ring(Context& ctx, const Args& args) {
  const BlockLayout layout = BlockLayout::equal(args.count, ctx.size());
  RCC_RETURN_IF_ERROR(ring_reduce_scatter(ctx, args.sendbuf, args.recvbuf, layout, args.datatype, args.op, 0));
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double reduce_scatter_ring_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kReduceScatterRing;
const AlgorithmRow kReduceScatterRing{Kind::kReduceScatter,     "ring",          "", reduce_scatter_ring,
                                      reduce_scatter_ring_cost, Needs::kMessages};

}  // namespace rcc::collectives
