// Scatter through shared memory: per round the root copies a piece of every block into its slot
// and publishes; each other rank waits for the root only and copies its piece out. Cost: ceil(P*n / slot) steps; the root copies P*n bytes.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

Status scatter_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const int n = segment.size(), rank = segment.rank();
  const size_t element = rcc_datatype_size(args.datatype), block = args.count * element;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), n, element);
  const auto* send = static_cast<const uint8_t*>(args.sendbuf);
  auto* recv = static_cast<uint8_t*>(args.recvbuf);
  const bool root = rank == args.root;
  for (size_t base = 0; base < block; base += piece) {
    const size_t length = std::min(piece, block - base);
    const uint64_t step = segment.next_step();
    if (root) {
      RCC_RETURN_IF_ERROR(segment.begin("scatter"));
      uint8_t* slot = segment.slot(rank, step);
      for (int p = 0; p < n; ++p) {
        if (p != rank) std::memcpy(slot + static_cast<size_t>(p) * piece, send + static_cast<size_t>(p) * block + base, length);
      }
      segment.publish();
    } else {
      RCC_RETURN_IF_ERROR(segment.wait_for(args.root, "scatter"));
    }
    const uint8_t* from = root ? send + static_cast<size_t>(rank) * block + base
                               : segment.slot(args.root, step) + static_cast<size_t>(rank) * piece;
    if (recv + base != from) std::memcpy(recv + base, from, length);
    if (!root) segment.publish();
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
