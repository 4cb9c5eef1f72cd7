// Reduce, binomial tree, pipelined in segments: log2(P) steps; non-roots accumulate in scratch.
#include "collectives/algorithms.h"
#include "collectives/reduce_kernels.h"

namespace rcc::collectives {

Status reduce_tree(Context& ctx, const Args& args) {
  const bool is_root = ctx.rank() == args.root;
  RCC_RETURN_IF_ERROR(tree_reduce(ctx, args.sendbuf, is_root ? args.recvbuf : nullptr, args.count, args.datatype,
                                  args.op, args.root, 0));
  if (is_root && args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
