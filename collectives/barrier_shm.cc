// Barrier through shared memory: one step (each rank publishes a counter and watches the others').
#include "collectives/algorithms.h"

namespace rcc::collectives {

Status barrier_shm(Context& ctx, const Args&) { return ctx.shm().step("barrier"); }

}  // namespace rcc::collectives
