// Reduce-scatterv, ring: the ring reduce-scatter over blocks of recvcounts, laid out one after
// another in the send buffer; rank r ends with block r reduced.
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status reduce_scatterv_ring(Context& ctx, const Args& args) {
  const int ranks = ctx.size();
  std::vector<size_t> offsets(static_cast<size_t>(ranks));
  size_t offset = 0;
  for (int r = 0; r < ranks; ++r) {
    offsets[static_cast<size_t>(r)] = offset;
    offset += args.recvcounts[r];
  }
  const BlockLayout layout = BlockLayout::given(args.recvcounts, offsets.data(), ranks);
  if (layout.total == 0) return RCC_SUCCESS;  // every rank sees the same counts
  RCC_RETURN_IF_ERROR(ring_reduce_scatter(ctx, args.sendbuf, args.recvbuf, layout, args.datatype, args.op, 0));
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.recvcounts[ctx.rank()], args.datatype, ranks);
  return RCC_SUCCESS;
}

double reduce_scatterv_ring_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes / ranks, ranks); }

}  // namespace

extern const AlgorithmRow kReduceScattervRing;
const AlgorithmRow kReduceScattervRing{Kind::kReduceScatterv,     "ring",          "", reduce_scatterv_ring,
                                       reduce_scatterv_ring_cost, Needs::kMessages};

}  // namespace rcc::collectives
