// Barrier through shared memory: one step (each rank publishes a counter and watches the others').
#include "collectives/algorithms.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status barrier_shm(Context& ctx, const Args&) { return ctx.shm().step("barrier"); }

}  // namespace

extern const AlgorithmRow kBarrierShm;
const AlgorithmRow kBarrierShm{Kind::kBarrier, "shm", "", barrier_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
