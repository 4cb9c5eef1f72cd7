// Barrier, dissemination: ceil(log2(P)) rounds; in round k rank r signals r + 2^k and waits for
// r - 2^k. After the last round every rank has heard, transitively, from every other.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status barrier_dissemination(Context& ctx, const Args&) {
  const int ranks = ctx.size(), rank = ctx.rank();
  uint8_t token_out = 1, token_in = 0;
  uint32_t round = 0;
  for (int distance = 1; distance < ranks; distance <<= 1, ++round) {
    RCC_RETURN_IF_ERROR(ctx.sendrecv(&token_out, 1, mod(rank + distance, ranks), &token_in, 1,
                                     mod(rank - distance, ranks), ctx.tag(round)));
  }
  return RCC_SUCCESS;
}

double barrier_dissemination_cost(size_t, int ranks) { return cost::log2_ceil(ranks) * cost::alpha(); }

}  // namespace

extern const AlgorithmRow kBarrierDissemination;
const AlgorithmRow kBarrierDissemination{
    Kind::kBarrier, "dissemination", "", barrier_dissemination, barrier_dissemination_cost, Needs::kMessages};

}  // namespace rcc::collectives
