// Allreduce, tree: binomial reduce to rank 0, then binomial broadcast, both pipelined in segments.
// 2 log2(P) latency steps; good for mid-size messages. Rank 0 computes every element once.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status allreduce_tree(Context& ctx, const Args& args) {
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  RCC_RETURN_IF_ERROR(tree_reduce(ctx, args.sendbuf, args.recvbuf, args.count, args.datatype, args.op, 0, 0));
  if (ctx.rank() == 0 && args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return tree_broadcast(ctx, args.recvbuf, bytes, 0, false, 1);
}

double allreduce_tree_cost(size_t bytes, int ranks) {
  const double n = static_cast<double>(bytes), lg = cost::log2_ceil(ranks);
  return 2 * cost::pipelined_binomial(lg, n) + lg * n / cost::kReduceRate;
}

}  // namespace

extern const AlgorithmRow kAllreduceTree;
const AlgorithmRow kAllreduceTree{Kind::kAllreduce,    "tree",          "binomial", allreduce_tree,
                                  allreduce_tree_cost, Needs::kMessages};

}  // namespace rcc::collectives
