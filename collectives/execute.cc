#include "collectives/execute.h"

#include "collectives/algorithms.h"
#include "collectives/argument_check.h"

namespace rcc::collectives {
namespace {

constexpr uint32_t kCheckPhase = 0xfff0;  // algorithms use low phase numbers

using AlgorithmFn = Status (*)(Context&, const Args&);

AlgorithmFn lookup_shm(Kind kind) {
  switch (kind) {
    case Kind::kAllreduce: return allreduce_shm;
    case Kind::kBroadcast: return broadcast_shm;
    case Kind::kReduce: return reduce_shm;
    case Kind::kAllgather: return allgather_shm;
    case Kind::kReduceScatter: return reduce_scatter_shm;
    case Kind::kAlltoall: return alltoall_shm;
    case Kind::kGather: return gather_shm;
    case Kind::kScatter: return scatter_shm;
    case Kind::kBarrier: return barrier_shm;
  }
  return nullptr;
}

AlgorithmFn lookup(Kind kind, Algorithm algorithm) {
  if (algorithm == Algorithm::kShm) return lookup_shm(kind);
  switch (kind) {
    case Kind::kAllreduce:
      if (algorithm == Algorithm::kTree) return allreduce_tree;
      if (algorithm == Algorithm::kRecursiveDoubling) return allreduce_recursive_doubling;
      return allreduce_ring;
    case Kind::kBroadcast: return algorithm == Algorithm::kPipeline ? broadcast_pipeline : broadcast_tree;
    case Kind::kReduce: return reduce_tree;
    case Kind::kAllgather: return allgather_ring;
    case Kind::kReduceScatter: return reduce_scatter_ring;
    case Kind::kAlltoall: return alltoall_pairwise;
    case Kind::kGather: return gather_linear;
    case Kind::kScatter: return scatter_linear;
    case Kind::kBarrier: return barrier_dissemination;
  }
  return nullptr;
}

}  // namespace

Status execute(rcc_comm* comm, const Args& args, Algorithm algorithm, bool check) {
  if (comm->aborted.load()) {
    return fail(RCC_ERR_ABORTED, "%s: the communicator was aborted", kind_name(args.kind));
  }
  Context ctx(comm, comm->collective_sequence++);
  if (check) RCC_RETURN_IF_ERROR(check_arguments(ctx, args, kCheckPhase));
  if (args.count == 0 && args.kind != Kind::kBarrier) return RCC_SUCCESS;
  // Shared-memory collectives may not wait for anyone (a broadcast root), so they would not notice
  // a failure by themselves.
  if (algorithm == Algorithm::kShm) RCC_RETURN_IF_ERROR(comm->shm->check_usable(kind_name(args.kind)));
  AlgorithmFn run = lookup(args.kind, algorithm);
  if (run == nullptr) return fail(RCC_ERR_INTERNAL, "no algorithm for collective %d", static_cast<int>(args.kind));
  return run(ctx, args);
}

}  // namespace rcc::collectives
