// Reduce-scatterv through shared memory: as reduce_scatter_shm, with block r of recvcounts[r]
// elements at the sum of the counts before it. Per round every rank copies the next piece of each
// block into its slot, one step, and rank r reduces piece r of every slot in rank order into its
// result. Every rank knows the counts, so all agree on the rounds (the longest block over a piece)
// without a word. Cost: ceil(longest / piece) steps, a piece being a slot over the ranks; each rank
// copies its whole input in once and reduces P pieces of its block.
#include <cstring>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status reduce_scatterv_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), call.ranks, call.element);
  const size_t longest = largest_count(args.recvcounts, call.ranks) * call.element;
  const size_t me = static_cast<size_t>(call.rank);
  std::vector<const uint8_t*>& inputs = shm_input_list(call.ranks);
  for (size_t base = 0; base < longest; base += piece) {
    RCC_RETURN_IF_ERROR(segment.begin("reduce_scatterv"));
    const uint64_t step = segment.next_step();
    uint8_t* slot = segment.slot(call.rank, step);
    // Own piece too: then no input can alias recvbuf, whatever the caller passed.
    size_t offset = 0;
    for (int p = 0; p < call.ranks; ++p) {
      const size_t block = args.recvcounts[p] * call.element;
      const size_t part = round_part(block, base, piece);
      if (part > 0) std::memcpy(slot + static_cast<size_t>(p) * piece, call.send + offset + base, part);
      offset += block;
    }
    RCC_RETURN_IF_ERROR(segment.step("reduce_scatterv"));
    const size_t length = round_part(args.recvcounts[call.rank] * call.element, base, piece);
    if (length == 0) continue;
    for (int q = 0; q < call.ranks; ++q) inputs[static_cast<size_t>(q)] = segment.slot(q, step) + me * piece;
    shm_reduce_in_order(call.recv + base, inputs.data(), call.ranks, length / call.element, args);
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kReduceScattervShm;
const AlgorithmRow kReduceScattervShm{Kind::kReduceScatterv, "shm",   "",
                                      reduce_scatterv_shm,   nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
