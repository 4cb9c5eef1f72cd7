// Broadcast through shared memory: per chunk of one slot the root copies in and publishes, the
// others wait for the root only and copy out. Slots alternate, so the root copies chunk k+1 while
// the others copy chunk k, and a root that calls broadcast in a loop runs one call ahead. When
// ranks outnumber cores, up to 8 KiB go through a cell of the root's ring instead, and the root
// runs up to 15 calls ahead.
// Cost: 1 step up to 16 KiB (64 KiB when ranks outnumber cores), 2 up to 2S (chunks of n/2), then
// one per S; the root and each receiver copy n bytes once, and the copies overlap but for one
// chunk. From RCC_SHM_STREAM_BYTES (64 KiB) the root copies with streaming stores. From
// RCC_SHM_CMA_BYTES (64 KiB), with a core per rank and where every rank may reach the others'
// memory, the data instead moves straight between the buffers, the root writing a share into each
// other rank's and each of them reading the rest (process_vm_writev, process_vm_readv): 2 steps,
// (P - 1) n / P bytes copied by each rank, all at once. Measurements behind each rule:
// docs/shared-memory.md.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
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

// Every rank publishes where its buffer is; then the root writes the first n/P bytes into every
// other rank's buffer while each of them reads the rest out of the root's, so P cores copy
// (P - 1) n / P bytes each at once instead of P - 1 cores copying n (or the root and then the
// others copying n through the slots); the root returns (and may change its buffer) and the others
// use theirs only once every rank has finished.
Status broadcast_across(shm::Segment& segment, const Args& args, size_t bytes) {
  auto* buf = static_cast<uint8_t*>(args.recvbuf);
  RCC_RETURN_IF_ERROR(segment.begin("broadcast"));
  const uint64_t step = segment.next_step();
  std::memcpy(segment.slot(segment.rank(), step), &buf, sizeof buf);
  RCC_RETURN_IF_ERROR(segment.step("broadcast"));
  auto buffer_of = [&](int rank) {
    uint8_t* address = nullptr;
    std::memcpy(&address, segment.slot(rank, step), sizeof address);
    return address;
  };
  // A multiple of 64 bytes: in an aligned buffer the two copies into a receiver's never share a line.
  const size_t head = bytes / static_cast<size_t>(segment.size()) / 64 * 64;
  if (segment.rank() == args.root) {
    for (int rank = 0; rank < segment.size() && head > 0; ++rank) {
      if (rank != args.root) RCC_RETURN_IF_ERROR(segment.write_to(rank, buf, buffer_of(rank), head, "broadcast"));
    }
  } else {
    RCC_RETURN_IF_ERROR(
        segment.read_from(args.root, buffer_of(args.root) + head, buf + head, bytes - head, "broadcast"));
  }
  return segment.step("broadcast");
}

Status broadcast_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  auto* buf = static_cast<uint8_t*>(args.recvbuf);
  if (segment.copies_across_on_own_cores(bytes)) return broadcast_across(segment, args, bytes);
  const bool root = segment.rank() == args.root;
  // Up to kCellBytes with cells (ranks share cores), one step through the root's ring: a root
  // broadcasting in a loop runs up to kCells - 1 calls ahead instead of one, which spares a context
  // switch per call. With a core per rank the slots measured faster.
  const bool in_cell = segment.has_cells() && bytes <= shm::Segment::kCellBytes;
  const bool streaming = !in_cell && segment.streams_broadcast(bytes);
  const bool stream_out = segment.streams_output(bytes);
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
      if (stream_out) {
        shm::copy_streaming(buf + base, shared, length);
      } else {
        std::memcpy(buf + base, shared, length);
      }
    }
    segment.publish();
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kBroadcastShm;
const AlgorithmRow kBroadcastShm{Kind::kBroadcast, "shm", "", broadcast_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
