// What the shared-memory algorithms share: the view of one call (segment, ranks, buffers), cutting
// per-rank blocks into the pieces that fit a slot, and the copies into and out of the slots.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "collectives/collective.h"

namespace rcc::collectives {

// One shared-memory collective call on this rank.
struct ShmCall {
  ShmCall(Context& ctx, const Args& args)
      : segment(ctx.shm()),
        ranks(segment.size()),
        rank(segment.rank()),
        element(rcc_datatype_size(args.datatype)),
        send(static_cast<const uint8_t*>(args.sendbuf)),
        recv(static_cast<uint8_t*>(args.recvbuf)) {}
  shm::Segment& segment;
  const int ranks;
  const int rank;
  const size_t element;
  const uint8_t* const send;
  uint8_t* const recv;
};

// Bytes of the piece each of `parts` blocks gets in one slot: a whole number of elements and, when
// it can be, of cache lines (so ranks never write the same line).
inline size_t shm_piece_bytes(size_t slot_bytes, int parts, size_t element) {
  size_t piece = slot_bytes / static_cast<size_t>(parts);
  if (piece >= 64) piece -= piece % 64;
  piece -= piece % element;
  return std::max(piece, element);
}

// Into `slot`, at piece p of each: bytes [base, base + length) of block p of `blocks` (blocks of
// `block` bytes, one per rank), for every p but `skip` (-1: none skipped).
inline void stage_pieces(uint8_t* slot, const uint8_t* blocks, int ranks, size_t block, size_t piece, size_t base,
                         size_t length, int skip) {
  for (int p = 0; p < ranks; ++p) {
    if (p != skip)
      std::memcpy(slot + static_cast<size_t>(p) * piece, blocks + static_cast<size_t>(p) * block + base, length);
  }
}

// Out of every rank's slot for `step` (at `offset` in it), `length` bytes into block p of recv at
// `base`; this rank's own bytes come from `own` instead (no copy when it is already in place).
inline void unstage_blocks(const ShmCall& call, uint64_t step, size_t offset, const uint8_t* own, size_t block,
                           size_t base, size_t length) {
  for (int p = 0; p < call.ranks; ++p) {
    uint8_t* to = call.recv + static_cast<size_t>(p) * block + base;
    const uint8_t* from = p == call.rank ? own : call.segment.slot(p, step) + offset;
    if (to != from) std::memcpy(to, from, length);
  }
}

}  // namespace rcc::collectives
