// Allreduce, ring: reduce-scatter then allgather over P nearly equal blocks. Bandwidth optimal
// (2(P-1)/P of the data per rank); 2(P-1) latency steps. Each block is reduced once, by its owner's
// ring pass, and copied to the others, so all ranks hold the same bits.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status allreduce_ring(Context& ctx, const Args& args) {
  const size_t element = rcc_datatype_size(args.datatype);
  const BlockLayout layout = BlockLayout::split(args.count, ctx.size());
  const int rank = ctx.rank();
  uint8_t* own = at(args.recvbuf, layout.offset(rank), element);
  RCC_RETURN_IF_ERROR(ring_reduce_scatter(ctx, args.sendbuf, own, layout, args.datatype, args.op, 0));
  if (args.op == RCC_AVG) scale_divide(own, layout.count(rank), args.datatype, ctx.size());
  return ring_allgather(ctx, args.recvbuf, layout, element, 1);
}

double allreduce_ring_cost(size_t bytes, int ranks) {
  // 2(P-1) steps of n/P; the reduce-scatter half also reduces (P-1)/P of the data.
  const double n = static_cast<double>(bytes), p = ranks;
  return 2 * (p - 1) * (cost::alpha() + n / p / cost::bandwidth()) + (p - 1) / p * n / cost::kReduceRate;
}

}  // namespace

extern const AlgorithmRow kAllreduceRing;
const AlgorithmRow kAllreduceRing{Kind::kAllreduce, "ring", "", allreduce_ring, allreduce_ring_cost, Needs::kMessages};

}  // namespace rcc::collectives
