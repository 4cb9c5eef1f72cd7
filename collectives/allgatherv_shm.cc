// Allgatherv through shared memory: as allgather_shm, with blocks of the given counts at the given
// displacements. Every rank knows every count, so all agree on the rounds (the longest block over a
// slot) without a word; a block shorter than a round puts nothing in it. Cost: ceil(longest / slot)
// steps; each rank copies its block in and every other block out. Only the blocks are written, so
// the gaps between them stay as they were.
// From RCC_SHM_CMA_BYTES in the longest block (with a core per rank, and where every rank may reach
// the others' memory), every rank posts where its sendbuf is and reads every other rank's block
// straight out of that rank's sendbuf (process_vm_readv): two steps (the second so that no rank
// returns, and may change its sendbuf, while another still reads it), one copy of each block.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status allgatherv_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t slot_bytes = segment.slot_bytes();
  const size_t longest = largest_count(args.recvcounts, call.ranks) * call.element;
  const size_t mine = args.recvcounts[call.rank] * call.element;
  // sendbuf may already be this rank's block; an empty block may come from a NULL buffer.
  uint8_t* own = mine > 0 ? at(args.recvbuf, args.rdispls[call.rank], call.element) : nullptr;
  if (segment.copies_across_on_own_cores(longest)) {
    RCC_RETURN_IF_ERROR(segment.begin("allgatherv"));
    const uint64_t step = segment.next_step();
    // The others read sendbuf itself: this rank's own copy then runs after the reads, off the path
    // every rank waits on (one copy of a block of 128 KiB is a few microseconds).
    std::memcpy(segment.slot(call.rank, step), &call.send, sizeof call.send);
    RCC_RETURN_IF_ERROR(segment.step("allgatherv"));
    for (int from = 0; from < call.ranks; ++from) {
      const size_t bytes = args.recvcounts[from] * call.element;
      if (from == call.rank || bytes == 0) continue;
      const uint8_t* theirs = nullptr;
      std::memcpy(&theirs, segment.slot(from, step), sizeof theirs);
      RCC_RETURN_IF_ERROR(
          segment.read_from(from, theirs, at(args.recvbuf, args.rdispls[from], call.element), bytes, "allgatherv"));
    }
    if (own != call.send && mine > 0) std::memcpy(own, call.send, mine);
    return segment.step("allgatherv");
  }
  if (own != call.send && mine > 0) std::memcpy(own, call.send, mine);
  for (size_t base = 0; base < longest; base += slot_bytes) {
    RCC_RETURN_IF_ERROR(segment.begin("allgatherv"));
    const uint64_t step = segment.next_step();
    const size_t length = round_part(mine, base, slot_bytes);
    if (length > 0) std::memcpy(segment.slot(call.rank, step), call.send + base, length);
    RCC_RETURN_IF_ERROR(segment.step("allgatherv"));
    unstage_displaced(call, args, step, base, slot_bytes);
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kAllgathervShm;
const AlgorithmRow kAllgathervShm{Kind::kAllgatherv, "shm", "", allgatherv_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
