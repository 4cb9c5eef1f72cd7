// Gather through shared memory: per chunk of one slot every other rank copies its piece in and
// publishes (without waiting), the root waits for them all and copies the pieces out. Cost: ceil(n / slot) steps; the
// root copies P*n bytes.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status gather_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const size_t block = args.count * call.element;
  for (size_t base = 0; base < block; base += segment.slot_bytes()) {
    const size_t length = std::min(segment.slot_bytes(), block - base);
    const uint64_t step = segment.next_step();
    if (call.rank != args.root) {
      RCC_RETURN_IF_ERROR(segment.begin("gather"));
      std::memcpy(segment.slot(call.rank, step), call.send + base, length);
      segment.publish();
      continue;
    }
    RCC_RETURN_IF_ERROR(segment.wait_others_then_publish("gather"));
    unstage_blocks(call, step, 0, call.send + base, block, base, length);
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kGatherShm;
const AlgorithmRow kGatherShm{Kind::kGather, "shm", "", gather_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
