// Gatherv through shared memory: as gather_shm, with blocks of the given counts at the given
// displacements of the root's buffer. Only the root knows the counts, so it first posts the number
// of rounds (the longest block over a slot, as a Segment note) and the others wait for it; then per
// round every other rank copies the next piece of its block in and publishes (without waiting),
// and the root waits for them all and copies the pieces out. Cost: 1 + ceil(longest / slot) steps;
// the root copies every block once. Only the blocks are written; the gaps stay as they were.
// From RCC_SHM_CMA_BYTES (the largest block; where every rank may reach the others' memory) the
// root posts where each block goes instead, and every other rank writes its own straight into the
// root's buffer (process_vm_writev), all at once: one step, one copy of each block; the root
// returns once every rank has written.
#include <cstring>
#include <limits>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

// The note that says "write your block into the root's buffer" (never a number of rounds).
constexpr uint64_t kAcross = std::numeric_limits<uint64_t>::max();

Status gatherv_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t slot_bytes = segment.slot_bytes();
  const bool root = call.rank == args.root;
  const size_t mine = args.count * call.element;
  uint64_t rounds = 0;
  if (root) {
    const size_t longest = largest_count(args.recvcounts, call.ranks) * call.element;
    const bool across = segment.copies_across(longest) && call.ranks * sizeof(BlockAddress) <= slot_bytes;
    rounds = across ? kAcross : (longest + slot_bytes - 1) / slot_bytes;
    RCC_RETURN_IF_ERROR(segment.begin("gatherv"));
    if (across)
      post_block_addresses(segment.slot(call.rank, segment.next_step()), args.recvbuf, args.recvcounts, args.rdispls,
                           call);
    segment.set_note(rounds);
    segment.publish();
    // sendbuf may already be the root's block; an empty block may come from a NULL buffer.
    const size_t own_bytes = args.recvcounts[call.rank] * call.element;
    uint8_t* own = own_bytes > 0 ? at(args.recvbuf, args.rdispls[call.rank], call.element) : nullptr;
    if (own != call.send && own_bytes > 0) std::memcpy(own, call.send, own_bytes);
    // Across: recvbuf is complete once every rank has written its block, unless a write failed (the
    // writer then still arrives, and marks the segment failed).
    if (across) {
      RCC_RETURN_IF_ERROR(segment.begin("gatherv"));
      return segment.check_usable("gatherv");
    }
  } else {
    RCC_RETURN_IF_ERROR(segment.wait_for(args.root, "gatherv"));
    rounds = segment.note(args.root, segment.next_step());  // read before arriving (Segment::set_note)
    if (rounds == kAcross) {
      const BlockAddress block = posted_block_address(segment.slot(args.root, segment.next_step()), call.rank);
      const Status written =
          mine > 0 ? segment.write_to(args.root, call.send, block.address, std::min(mine, block.bytes), "gatherv")
                   : Status(RCC_SUCCESS);
      segment.publish();  // also when the write failed: the root's wait then ends (the segment is failed)
      return written;
    }
    segment.publish();
  }
  for (uint64_t round = 0; round < rounds; ++round) {
    const size_t base = round * slot_bytes;
    const uint64_t step = segment.next_step();
    if (!root) {
      RCC_RETURN_IF_ERROR(segment.begin("gatherv"));
      const size_t length = round_part(mine, base, slot_bytes);
      if (length > 0) std::memcpy(segment.slot(call.rank, step), call.send + base, length);
      segment.publish();
      continue;
    }
    RCC_RETURN_IF_ERROR(segment.wait_others_then_publish("gatherv"));
    unstage_displaced(call, args, step, base, slot_bytes);
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kGathervShm;
const AlgorithmRow kGathervShm{Kind::kGatherv, "shm", "", gatherv_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
