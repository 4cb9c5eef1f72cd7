// Broadcast through shared memory: per chunk of one slot the root copies in and publishes, the
// others wait for the root only and copy out. Slots alternate, so the root copies chunk k+1 while
// the others copy chunk k, and a root that calls broadcast in a loop runs one call ahead.
// Cost: about 8 steps (chunks of n/8, 16 KiB to one slot); the root and each receiver copy n
// bytes once, and the two copies overlap.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"

namespace rcc::collectives {
namespace {

// At least ~8 chunks per call (but >= 16 KiB, <= one slot): the root's copy of chunk k+1 then
// overlaps the others' copy of chunk k for all but one chunk, instead of the two copies running
// one after the other (measured 128 KiB-1 MiB: ~1.6x; a step costs well under a microsecond).
size_t chunk_bytes(size_t bytes, size_t slot_bytes) {
  constexpr size_t kMinChunk = 16 * 1024;
  const size_t wanted = (bytes / 8 + 4095) / 4096 * 4096;
  return std::min(slot_bytes, std::max(kMinChunk, wanted));
}

}  // namespace

Status broadcast_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  auto* buf = static_cast<uint8_t*>(args.recvbuf);
  const bool root = segment.rank() == args.root;
  const size_t chunk = chunk_bytes(bytes, segment.slot_bytes());
  for (size_t base = 0; base < bytes; base += chunk) {
    const size_t length = std::min(chunk, bytes - base);
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
