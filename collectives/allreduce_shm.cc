// Allreduce through shared memory: every rank reduces everything for 2 ranks and small messages,
// else each reduces its portion and all copy the results out (shm_allreduce in shm_reduce.cc).
#include "collectives/algorithms.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status allreduce_shm(Context& ctx, const Args& args) { return shm_allreduce(ctx, args); }

}  // namespace

extern const AlgorithmRow kAllreduceShm;
const AlgorithmRow kAllreduceShm{Kind::kAllreduce, "shm", "", allreduce_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
