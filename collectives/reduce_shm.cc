// Reduce through shared memory: the allreduce steps, with only the root copying the result out
// (the other ranks still reduce their portions, so the root does 1/P of the kernel work).
#include "collectives/algorithms.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status reduce_shm(Context& ctx, const Args& args) {
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  if (shm_reduce_in_one_step(bytes, ctx.size())) return shm_reduce_one_step(ctx, args, false);
  return shm_reduce_chunks(ctx, args, false);
}

}  // namespace

extern const AlgorithmRow kReduceShm;
const AlgorithmRow kReduceShm{Kind::kReduce, "shm", "", reduce_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
