// Broadcast through shared memory: per chunk of one slot the root copies in and publishes, the
// others wait for the root only and copy out. Slots alternate, so the root copies chunk k+1 while
// the others copy chunk k, and a root that calls broadcast in a loop runs one call ahead. When
// ranks outnumber cores, up to 8 KiB go through a cell of the root's ring instead, and the root
// runs up to 15 calls ahead.
// Cost: 1 step up to 16 KiB (64 KiB when ranks outnumber cores), 2 up to 2S (chunks of n/2), then
// one per S; the root and each receiver copy n bytes once, and the copies overlap but for one
// chunk. From RCC_SHM_STREAM_BYTES (64 KiB) the root copies with streaming stores. Measurements
// behind each rule: docs/shared-memory.md.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "shm/stream_copy.h"

namespace rcc::collectives {
namespace {

// Two chunks per call (but >= 16 KiB, <= one slot): the others' copy of the first half overlaps
// the root's copy of the second; more, smaller chunks overlap more but cost a step each. When
// ranks outnumber cores a step is a context switch: chunks of at least 64 KiB then.
constexpr size_t kCrowdedMinChunk = 64 * 1024;
// Cells exist only when ranks outnumber cores: a message that fits one is then a single chunk.
static_assert(shm::Segment::kCellBytes <= kCrowdedMinChunk);
size_t chunk_bytes(size_t bytes, size_t slot_bytes, bool oversubscribed) {
  const size_t min_chunk = oversubscribed ? kCrowdedMinChunk : 16 * 1024;
  const size_t half = (bytes / 2 + 4095) / 4096 * 4096;
  return std::min(slot_bytes, std::max(min_chunk, half));
}

}  // namespace

Status broadcast_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  auto* buf = static_cast<uint8_t*>(args.recvbuf);
  const bool root = segment.rank() == args.root;
  // Up to kCellBytes with cells (ranks share cores), one step through the root's ring: a root
  // broadcasting in a loop runs up to kCells - 1 calls ahead instead of one, which spares a context
  // switch per call. With a core per rank the slots measured faster.
  const bool in_cell = segment.has_cells() && bytes <= shm::Segment::kCellBytes;
  const bool streaming = !in_cell && segment.streams_broadcast(bytes);
  const size_t chunk = chunk_bytes(bytes, segment.slot_bytes(), segment.oversubscribed());
  for (size_t base = 0; base < bytes; base += chunk) {
    const size_t length = std::min(chunk, bytes - base);
    const uint64_t step = segment.next_step();
    uint8_t* shared = in_cell ? segment.cell(args.root, step) : segment.slot(args.root, step);
    if (root) {
      RCC_RETURN_IF_ERROR(in_cell ? segment.begin_cell("broadcast") : segment.begin("broadcast"));
      if (streaming) {
        shm::copy_streaming(shared, buf + base, length);
      } else {
        std::memcpy(shared, buf + base, length);
      }
    } else {
      RCC_RETURN_IF_ERROR(segment.wait_for(args.root, "broadcast"));
      std::memcpy(buf + base, shared, length);
    }
    segment.publish();
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
