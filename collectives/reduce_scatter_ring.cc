// Reduce-scatter, ring: P-1 steps; rank r ends with block r (recvcount elements) reduced.
// In place when recvbuf == sendbuf + rank * recvcount elements (as NCCL).
#include "collectives/algorithms.h"
#include "collectives/reduce_kernels.h"

namespace rcc::collectives {

Status reduce_scatter_ring(Context& ctx, const Args& args) {
  const BlockLayout layout = BlockLayout::equal(args.count, ctx.size());
  RCC_RETURN_IF_ERROR(ring_reduce_scatter(ctx, args.sendbuf, args.recvbuf, layout, args.datatype, args.op, 0));
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
