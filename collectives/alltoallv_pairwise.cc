// Alltoallv, pairwise exchange: as alltoall (every receive and send posted at once, step s to
// rank r+s and from r-s, so every rank sends to a different peer), with each pair's own count
// and displacements. Empty blocks send nothing.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status alltoallv_pairwise(Context& ctx, const Args& args) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t element = rcc_datatype_size(args.datatype);
  RequestSet requests(ctx.engine());
  for (int step = 1; step < ranks; ++step) {
    const int from = mod(rank - step, ranks);
    if (args.recvcounts[from] == 0) continue;
    RCC_RETURN_IF_ERROR(ctx.post_recv(requests, at(args.recvbuf, args.rdispls[from], element),
                                      args.recvcounts[from] * element, from, tag));
  }
  for (int step = 1; step < ranks; ++step) {
    const int to = mod(rank + step, ranks);
    if (args.sendcounts[to] == 0) continue;
    RCC_RETURN_IF_ERROR(
        ctx.post_send(requests, at(args.sendbuf, args.sdispls[to], element), args.sendcounts[to] * element, to, tag));
  }
  if (args.recvcounts[rank] > 0) {
    std::memmove(at(args.recvbuf, args.rdispls[rank], element), at(args.sendbuf, args.sdispls[rank], element),
                 args.recvcounts[rank] * element);
  }
  return requests.wait_all();
}

double alltoallv_pairwise_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes / ranks, ranks); }

}  // namespace

extern const AlgorithmRow kAlltoallvPairwise;
const AlgorithmRow kAlltoallvPairwise{Kind::kAlltoallv,        "pairwise",      "", alltoallv_pairwise,
                                      alltoallv_pairwise_cost, Needs::kMessages};

}  // namespace rcc::collectives
