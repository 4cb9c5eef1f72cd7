// Barrier in levels (docs/hierarchy.md): every host meets through its segment, one rank per host
// (local rank 0) meets the others', then every host meets again to release its ranks.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

Status barrier_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  RCC_RETURN_IF_ERROR(run_on_host(ctx, args, kBarrierShm));
  if (levels.host.rank == 0) RCC_RETURN_IF_ERROR(run_on_cross(ctx, args));
  return run_on_host(ctx, args, kBarrierShm);
}

double barrier_hierarchical_cost(size_t, const Levels& levels) {
  return 2 * cost::rates().shm_alpha + cross_cost(Kind::kBarrier, 0, levels.hosts);
}

}  // namespace

extern const AlgorithmRow kBarrierHierarchical;
const AlgorithmRow kBarrierHierarchical{Kind::kBarrier, "hierarchical",           "hier", barrier_hierarchical, nullptr,
                                        Needs::kLevels, barrier_hierarchical_cost};

}  // namespace rcc::collectives
