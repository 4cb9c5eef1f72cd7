// Alltoallv through shared memory: as alltoall_shm, every rank's slot holds one piece per
// destination; per round each rank copies the next piece of each block it sends into it, one step,
// and every rank copies the pieces addressed to it out to their displacements. Blocks differ in
// length, so the ranks first agree on the number of rounds (one step in which each rank posts its
// longest block); blocks that are shorter than a round stage nothing. Cost: 1 + ceil(longest block
// / piece) steps; each rank copies what it sends in and what it receives out.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status alltoallv_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), call.ranks, call.element);
  size_t longest = 0;
  for (int r = 0; r < call.ranks; ++r) longest = std::max({longest, args.sendcounts[r], args.recvcounts[r]});
  longest *= call.element;

  RCC_RETURN_IF_ERROR(segment.begin("alltoallv"));
  uint64_t step = segment.next_step();
  std::memcpy(segment.slot(call.rank, step), &longest, sizeof longest);
  RCC_RETURN_IF_ERROR(segment.step("alltoallv"));
  for (int r = 0; r < call.ranks; ++r) {
    size_t theirs = 0;
    std::memcpy(&theirs, segment.slot(r, step), sizeof theirs);
    longest = std::max(longest, theirs);
  }

  const size_t me = static_cast<size_t>(call.rank);
  for (size_t base = 0; base < longest; base += piece) {
    RCC_RETURN_IF_ERROR(segment.begin("alltoallv"));
    step = segment.next_step();
    uint8_t* slot = segment.slot(call.rank, step);
    for (int to = 0; to < call.ranks; ++to) {
      const size_t length = round_part(args.sendcounts[to] * call.element, base, piece);
      if (to != call.rank && length > 0) {
        std::memcpy(slot + static_cast<size_t>(to) * piece, at(args.sendbuf, args.sdispls[to], call.element) + base,
                    length);
      }
    }
    RCC_RETURN_IF_ERROR(segment.step("alltoallv"));
    for (int from = 0; from < call.ranks; ++from) {
      const size_t length = round_part(args.recvcounts[from] * call.element, base, piece);
      if (length == 0) continue;
      uint8_t* to = at(args.recvbuf, args.rdispls[from], call.element) + base;
      const uint8_t* source = from == call.rank ? at(args.sendbuf, args.sdispls[from], call.element) + base
                                                : segment.slot(from, step) + me * piece;
      std::memcpy(to, source, length);
    }
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kAlltoallvShm;
const AlgorithmRow kAlltoallvShm{Kind::kAlltoallv, "shm", "", alltoallv_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
