// Broadcast, pipelined chain: root -> root+1 -> ... in segments; each link carries the message
// once, so time approaches bytes/bandwidth + (P-2) segment times for large messages.
#include "collectives/algorithms.h"

namespace rcc::collectives {

Status broadcast_pipeline(Context& ctx, const Args& args) {
  return tree_broadcast(ctx, args.recvbuf, args.count * rcc_datatype_size(args.datatype), args.root, true, 0);
}

}  // namespace rcc::collectives
