// Broadcast through shared memory: per chunk of one slot the root copies in and publishes, the
// others wait for the root only and copy out. Slots alternate, so the root copies chunk k+1 while
// the others copy chunk k, and a root that calls broadcast in a loop runs one call ahead.
// Cost: ceil(n / slot) steps; the root and each receiver copy n bytes once.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"

namespace rcc::collectives {

Status broadcast_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  auto* buf = static_cast<uint8_t*>(args.recvbuf);
  const bool root = segment.rank() == args.root;
  for (size_t base = 0; base < bytes; base += segment.slot_bytes()) {
    const size_t length = std::min(segment.slot_bytes(), bytes - base);
    const uint64_t step = segment.next_step();
    if (root) {
      RCC_RETURN_IF_ERROR(segment.begin("broadcast"));
      std::memcpy(segment.slot(args.root, step), buf + base, length);
      segment.publish();
    } else {
      RCC_RETURN_IF_ERROR(segment.wait_for(args.root, "broadcast"));
      std::memcpy(buf + base, segment.slot(args.root, step), length);
      segment.publish();
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
