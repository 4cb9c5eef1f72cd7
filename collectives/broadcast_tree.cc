// Broadcast, binomial tree: log2(P) steps of the whole message (segmented, so a rank forwards a
// segment while the next arrives). Best for small and mid-size messages.
#include "collectives/algorithms.h"

namespace rcc::collectives {

Status broadcast_tree(Context& ctx, const Args& args) {
  return tree_broadcast(ctx, args.recvbuf, args.count * rcc_datatype_size(args.datatype), args.root, false, 0);
}

}  // namespace rcc::collectives
