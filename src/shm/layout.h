// What the shared segment holds: a header, one control line per rank, two slots per rank, then
// (when ranks outnumber cores) a ring of small cells per rank.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm/segment.h"

namespace rcc::shm {

constexpr uint64_t kMagic = 0x7263632d73686d32ull;  // "rcc-shm2"

struct SegmentHeader {
  uint64_t magic;
  uint64_t nonce;  // proves a rank opened the segment its creator made, not a stale one
  uint64_t ranks;
  uint64_t slot_bytes;
  // Futex word bumped by a rank that arrives while others sleep, and how many sleep.
  alignas(64) std::atomic<uint32_t> wake;
  std::atomic<uint32_t> sleepers;
  // 0, or 1 + the first rank whose shared-memory collective failed: the ranks' steps no longer
  // match, so every rank's later steps fail at once instead of pairing with the wrong call.
  std::atomic<uint32_t> failed_rank;
};

// Each rank's step counter in a line of its own (two lines: the adjacent-line prefetcher would
// otherwise make neighbours share), and the notes its arrivals show the others (set_note): one for
// even steps, one for odd ones.
struct alignas(128) StepControl {
  std::atomic<uint64_t> step;
  std::atomic<uint64_t> note[2];
};

constexpr size_t kHeaderBytes = 256;
constexpr size_t kPageBytes = 4096;

inline size_t round_up(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }
inline size_t data_offset(int ranks) {
  return round_up(kHeaderBytes + sizeof(StepControl) * static_cast<size_t>(ranks), kPageBytes);
}
inline size_t cells_offset(int ranks, size_t slot_bytes) {
  return data_offset(ranks) + static_cast<size_t>(ranks) * 2 * slot_bytes;
}
inline size_t segment_bytes(int ranks, size_t slot_bytes, bool with_cells) {
  return cells_offset(ranks, slot_bytes) +
         (with_cells ? static_cast<size_t>(ranks) * Segment::kCells * Segment::kCellBytes : 0);
}

static_assert(sizeof(SegmentHeader) <= kHeaderBytes);
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "the step words are shared between processes");

}  // namespace rcc::shm
