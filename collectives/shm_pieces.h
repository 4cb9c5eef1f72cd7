// Cutting per-rank blocks into the pieces that fit the shared-memory slots.
#pragma once

#include <algorithm>
#include <cstddef>

namespace rcc::collectives {

// Bytes of the piece each of `parts` blocks gets in one slot: a whole number of elements and, when
// it can be, of cache lines (so ranks never write the same line).
inline size_t shm_piece_bytes(size_t slot_bytes, int parts, size_t element) {
  size_t piece = slot_bytes / static_cast<size_t>(parts);
  if (piece >= 64) piece -= piece % 64;
  piece -= piece % element;
  return std::max(piece, element);
}

}  // namespace rcc::collectives
