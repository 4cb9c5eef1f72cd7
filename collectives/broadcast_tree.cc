// Broadcast, binomial tree: log2(P) steps of the whole message (segmented, so a rank forwards a
// segment while the next arrives). Best for small and mid-size messages.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status broadcast_tree(Context& ctx, const Args& args) {
  return tree_broadcast(ctx, args.recvbuf, args.count * rcc_datatype_size(args.datatype), args.root, false, 0);
}

double broadcast_tree_cost(size_t bytes, int ranks) {
  return cost::pipelined_binomial(cost::log2_ceil(ranks), static_cast<double>(bytes));
}

}  // namespace

extern const AlgorithmRow kBroadcastTree;
const AlgorithmRow kBroadcastTree{Kind::kBroadcast,    "tree",          "binomial", broadcast_tree,
                                  broadcast_tree_cost, Needs::kMessages};

}  // namespace rcc::collectives
