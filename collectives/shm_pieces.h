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

// Start of portion p of a chunk of `count` elements cut into `parts`, on cache-line boundaries so
// that two ranks never write the same line (element sizes are 1, 2, 4 or 8 bytes).
inline size_t shm_portion_begin(size_t count, int p, int parts, size_t element) {
  const size_t per_line = 64 / element;
  const size_t lines = (count + per_line - 1) / per_line;
  return std::min(count, lines * static_cast<size_t>(p) / static_cast<size_t>(parts) * per_line);
}

// Bytes of the piece each of `parts` blocks gets in one slot: a whole number of elements and, when
// it can be, of cache lines (so ranks never write the same line).
inline size_t shm_piece_bytes(size_t slot_bytes, int parts, size_t element) {
  size_t piece = slot_bytes / static_cast<size_t>(parts);
  if (piece >= 64) piece -= piece % 64;
  piece -= piece % element;
  return std::max(piece, element);
}

// The part of a block of `bytes` that falls in the round starting at `base`, up to `piece` bytes
// (the vector collectives: a block shorter than a round has nothing in it).
inline size_t round_part(size_t bytes, size_t base, size_t piece) {
  return bytes > base ? std::min(piece, bytes - base) : 0;
}

// The largest of `n` counts.
inline size_t largest_count(const size_t* counts, int n) { return n > 0 ? *std::max_element(counts, counts + n) : 0; }

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

// Out of every other rank's slot for `step`: the part of its block (recvcounts, rdispls of `args`)
// that falls in the round starting at `base` (rounds of `round` bytes), into recv at the block's
// displacement plus base. This rank's own block is left alone.
inline void unstage_displaced(const ShmCall& call, const Args& args, uint64_t step, size_t base, size_t round) {
  for (int from = 0; from < call.ranks; ++from) {
    const size_t part = round_part(args.recvcounts[from] * call.element, base, round);
    if (from != call.rank && part > 0)
      std::memcpy(at(args.recvbuf, args.rdispls[from], call.element) + base, call.segment.slot(from, step), part);
  }
}

// Where a rank's block lies in the root's buffer (the copies across processes of scatterv and
// gatherv): the root posts one per rank in its slot, each other rank copies its own block.
struct BlockAddress {
  uint8_t* address;  // in the root's address space
  size_t bytes;
};
inline void post_block_addresses(uint8_t* slot, const void* buffer, const size_t* counts, const size_t* displs,
                                 const ShmCall& call) {
  for (int r = 0; r < call.ranks; ++r) {
    // An empty block's displacement may point anywhere (or the buffer be NULL): no address then.
    const size_t bytes = counts[r] * call.element;
    const BlockAddress block{bytes > 0 ? const_cast<uint8_t*>(at(buffer, displs[r], call.element)) : nullptr, bytes};
    std::memcpy(slot + static_cast<size_t>(r) * sizeof block, &block, sizeof block);
  }
}
inline BlockAddress posted_block_address(const uint8_t* slot, int rank) {
  BlockAddress block;
  std::memcpy(&block, slot + static_cast<size_t>(rank) * sizeof block, sizeof block);
  return block;
}

}  // namespace rcc::collectives
