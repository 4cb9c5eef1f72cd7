// Broadcast, pipelined chain: root -> root+1 -> ... in segments; each link carries the message
// once, so time approaches bytes/bandwidth + (P-2) segment times for large messages.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status broadcast_pipeline(Context& ctx, const Args& args) {
  return tree_broadcast(ctx, args.recvbuf, args.count * rcc_datatype_size(args.datatype), args.root, true, 0);
}

double broadcast_pipeline_cost(size_t bytes, int ranks) {
  return cost::pipelined_chain(ranks - 1, static_cast<double>(bytes));
}

}  // namespace

extern const AlgorithmRow kBroadcastPipeline;
const AlgorithmRow kBroadcastPipeline{Kind::kBroadcast,        "pipeline",      "chain", broadcast_pipeline,
                                      broadcast_pipeline_cost, Needs::kMessages};

}  // namespace rcc::collectives
