// Scatterv through shared memory: as scatter_shm, with blocks of the given counts from the given
// displacements of the root's buffer. Per round the root copies the next piece of every other
// rank's block into its slot and publishes; each other rank waits for the root only and copies its
// piece out. Only the root knows the counts, so with the first round it posts the number of rounds
// (a Segment note; at least one, so that the others learn it even when every block is empty).
// Cost: max(1, ceil(longest / piece)) steps, a piece being a slot over the ranks; the root copies
// every block once.
// From RCC_SHM_CMA_BYTES (the largest block; where every rank may reach the others' memory) the
// root posts where each block is instead, and every other rank reads its own straight out of the
// root's buffer (process_vm_readv), all at once: one step, one copy of each block, the root copying
// only its own; it returns once every rank has read.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

// The note that says "read your block out of the root's buffer" (a number of rounds is at least 1).
constexpr uint64_t kAcross = 0;

Status scatterv_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), call.ranks, call.element);
  const bool root = call.rank == args.root;
  uint64_t rounds = 1;
  if (root) {
    const size_t longest = largest_count(args.sendcounts, call.ranks) * call.element;
    rounds = std::max<uint64_t>(1, (longest + piece - 1) / piece);
    if (segment.copies_across(longest) && call.ranks * sizeof(BlockAddress) <= segment.slot_bytes()) rounds = kAcross;
    // recvbuf may not overlap sendbuf; an empty block may come from a NULL buffer.
    const size_t mine = args.sendcounts[call.rank] * call.element;
    if (mine > 0) std::memcpy(call.recv, at(args.sendbuf, args.sdispls[call.rank], call.element), mine);
  }
  const size_t mine = args.count * call.element;
  for (uint64_t round = 0; round < std::max<uint64_t>(rounds, 1); ++round) {
    const size_t base = round * piece;
    const uint64_t step = segment.next_step();
    if (root) {
      RCC_RETURN_IF_ERROR(segment.begin("scatterv"));
      uint8_t* slot = segment.slot(call.rank, step);
      if (rounds == kAcross) {
        post_block_addresses(slot, args.sendbuf, args.sendcounts, args.sdispls, call);
      } else {
        for (int to = 0; to < call.ranks; ++to) {
          const size_t part = round_part(args.sendcounts[to] * call.element, base, piece);
          if (to != call.rank && part > 0)
            std::memcpy(slot + static_cast<size_t>(to) * piece, at(args.sendbuf, args.sdispls[to], call.element) + base,
                        part);
        }
      }
      if (round == 0) segment.set_note(rounds);
      segment.publish();
      // Across: sendbuf is the caller's again once every rank has read its block.
      if (rounds == kAcross) return segment.begin("scatterv");
      continue;
    }
    RCC_RETURN_IF_ERROR(segment.wait_for(args.root, "scatterv"));
    if (round == 0) rounds = segment.note(args.root, segment.next_step());  // read before arriving there
    if (rounds == kAcross) {
      const BlockAddress block = posted_block_address(segment.slot(args.root, step), call.rank);
      const Status read =
          mine > 0 ? segment.read_from(args.root, block.address, call.recv, std::min(mine, block.bytes), "scatterv")
                   : Status(RCC_SUCCESS);
      segment.publish();  // also when the read failed: the root's wait then ends (the segment is failed)
      return read;
    }
    const size_t length = round_part(mine, base, piece);
    if (length > 0)
      std::memcpy(call.recv + base, segment.slot(args.root, step) + static_cast<size_t>(call.rank) * piece, length);
    segment.publish();
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kScattervShm;
const AlgorithmRow kScattervShm{Kind::kScatterv, "shm", "", scatterv_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
