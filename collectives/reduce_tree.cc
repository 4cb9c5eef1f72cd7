// Reduce, binomial tree, pipelined in segments: log2(P) steps; non-roots accumulate in scratch.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status reduce_tree(Context& ctx, const Args& args) {
  const bool is_root = ctx.rank() == args.root;
  RCC_RETURN_IF_ERROR(tree_reduce(ctx, args.sendbuf, is_root ? args.recvbuf : nullptr, args.count, args.datatype,
                                  args.op, args.root, 0));
  if (is_root && args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double reduce_tree_cost(size_t bytes, int ranks) {
  const double n = static_cast<double>(bytes), lg = cost::log2_ceil(ranks);
  return cost::pipelined_binomial(lg, n) + lg * n / cost::kReduceRate;
}

}  // namespace

extern const AlgorithmRow kReduceTree;
const AlgorithmRow kReduceTree{Kind::kReduce, "tree", "binomial", reduce_tree, reduce_tree_cost, Needs::kMessages};

}  // namespace rcc::collectives
