// Allreduce through shared memory: every rank reduces everything for 2 ranks and small messages,
// else each reduces its portion and all copy the results out (costs in shm_reduce.cc).
#include "collectives/algorithms.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status allreduce_shm(Context& ctx, const Args& args) {
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  if (shm_reduce_in_one_step(bytes, ctx.size())) return shm_reduce_one_step(ctx, args, true);
  return shm_reduce_chunks(ctx, args, true);
}

}  // namespace

extern const AlgorithmRow kAllreduceShm;
const AlgorithmRow kAllreduceShm{Kind::kAllreduce, "shm", "", allreduce_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
