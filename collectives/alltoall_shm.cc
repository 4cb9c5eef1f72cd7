// Alltoall through shared memory: per round every rank copies a piece of each block it sends into
// its slot, one step, and every rank copies the pieces addressed to it out. Cost: ceil(P*n / slot)
// steps; each rank copies P*n bytes in and P*n out.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

Status alltoall_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const int n = segment.size(), rank = segment.rank();
  const size_t element = rcc_datatype_size(args.datatype), block = args.count * element;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), n, element);
  const auto* send = static_cast<const uint8_t*>(args.sendbuf);
  auto* recv = static_cast<uint8_t*>(args.recvbuf);
  const size_t me = static_cast<size_t>(rank);
  for (size_t base = 0; base < block; base += piece) {
    const size_t length = std::min(piece, block - base);
    RCC_RETURN_IF_ERROR(segment.begin("alltoall"));
    const uint64_t step = segment.next_step();
    uint8_t* slot = segment.slot(rank, step);
    for (int p = 0; p < n; ++p) {
      if (p != rank) std::memcpy(slot + static_cast<size_t>(p) * piece, send + static_cast<size_t>(p) * block + base, length);
    }
    RCC_RETURN_IF_ERROR(segment.step("alltoall"));
    for (int p = 0; p < n; ++p) {
      const uint8_t* from = p == rank ? send + me * block + base : segment.slot(p, step) + me * piece;
      uint8_t* to = recv + static_cast<size_t>(p) * block + base;
      if (to != from) std::memcpy(to, from, length);  // equal: in place
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
