// Reduce-scatter through shared memory: per round every rank copies a piece of each block into its
// slot, one step, and rank r reduces piece r of every slot in rank order into its result. Cost:
// ceil(P*n / slot) steps; each rank copies P*n bytes in and reduces P pieces of n.
#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status reduce_scatter_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t block = args.count * call.element;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), call.ranks, call.element);
  const size_t me = static_cast<size_t>(call.rank);
  std::vector<const uint8_t*>& inputs = shm_input_list(call.ranks);
  for (size_t base = 0; base < block; base += piece) {
    const size_t length = std::min(piece, block - base);
    RCC_RETURN_IF_ERROR(segment.begin("reduce_scatter"));
    const uint64_t step = segment.next_step();
    // Own piece too: then no input can alias recvbuf, whatever the caller passed.
    stage_pieces(segment.slot(call.rank, step), call.send, call.ranks, block, piece, base, length, -1);
    RCC_RETURN_IF_ERROR(segment.step("reduce_scatter"));
    for (int q = 0; q < call.ranks; ++q) inputs[static_cast<size_t>(q)] = segment.slot(q, step) + me * piece;
    shm_reduce_in_order(call.recv + base, inputs.data(), call.ranks, length / call.element, args);
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kReduceScatterShm;
const AlgorithmRow kReduceScatterShm{Kind::kReduceScatter, "shm",   "",
                                     reduce_scatter_shm,   nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
