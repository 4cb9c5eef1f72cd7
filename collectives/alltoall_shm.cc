// Alltoall through shared memory: per round every rank copies a piece of each block it sends into
// its slot, one step, and every rank copies the pieces addressed to it out. Cost: ceil(P*n / slot)
// steps; each rank copies P*n bytes in and P*n out.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status alltoall_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t block = args.count * call.element;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), call.ranks, call.element);
  const size_t me = static_cast<size_t>(call.rank);
  for (size_t base = 0; base < block; base += piece) {
    const size_t length = std::min(piece, block - base);
    RCC_RETURN_IF_ERROR(segment.begin("alltoall"));
    const uint64_t step = segment.next_step();
    stage_pieces(segment.slot(call.rank, step), call.send, call.ranks, block, piece, base, length, call.rank);
    RCC_RETURN_IF_ERROR(segment.step("alltoall"));
    unstage_blocks(call, step, me * piece, call.send + me * block + base, block, base, length);
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kAlltoallShm;
const AlgorithmRow kAlltoallShm{Kind::kAlltoall, "shm", "", alltoall_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
