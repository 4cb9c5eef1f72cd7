// Reduce-scatter through shared memory: per round every rank copies a piece of each block into its
// slot, one step, and rank r reduces piece r of every slot in rank order into its result. Cost:
// ceil(P*n / slot) steps; each rank copies P*n bytes in and reduces P pieces of n.
#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

Status reduce_scatter_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const int n = segment.size(), rank = segment.rank();
  const size_t element = rcc_datatype_size(args.datatype), block = args.count * element;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), n, element);
  const auto* send = static_cast<const uint8_t*>(args.sendbuf);
  auto* recv = static_cast<uint8_t*>(args.recvbuf);
  const size_t me = static_cast<size_t>(rank);
  std::vector<const uint8_t*>& inputs = shm_input_list(n);
  for (size_t base = 0; base < block; base += piece) {
    const size_t length = std::min(piece, block - base);
    RCC_RETURN_IF_ERROR(segment.begin("reduce_scatter"));
    const uint64_t step = segment.next_step();
    uint8_t* slot = segment.slot(rank, step);
    // Own piece too: then no input can alias recvbuf, whatever the caller passed.
    for (int p = 0; p < n; ++p) {
      std::memcpy(slot + static_cast<size_t>(p) * piece, send + static_cast<size_t>(p) * block + base, length);
    }
    RCC_RETURN_IF_ERROR(segment.step("reduce_scatter"));
    for (int q = 0; q < n; ++q) inputs[static_cast<size_t>(q)] = segment.slot(q, step) + me * piece;
    shm_reduce_in_order(recv + base, inputs.data(), n, length / element, args);
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
