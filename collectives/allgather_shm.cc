// Allgather through shared memory: per chunk of one slot every rank copies its piece in, one step,
// and every rank copies all pieces out. Cost: ceil(n / slot) steps; each rank copies n in and P*n out.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status allgather_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t block = args.count * call.element;
  for (size_t base = 0; base < block; base += segment.slot_bytes()) {
    const size_t length = std::min(segment.slot_bytes(), block - base);
    RCC_RETURN_IF_ERROR(segment.begin("allgather"));
    const uint64_t step = segment.next_step();
    std::memcpy(segment.slot(call.rank, step), call.send + base, length);
    RCC_RETURN_IF_ERROR(segment.step("allgather"));
    unstage_blocks(call, step, 0, call.send + base, block, base, length);  // in place: no copy
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kAllgatherShm;
const AlgorithmRow kAllgatherShm{Kind::kAllgather, "shm", "", allgather_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
