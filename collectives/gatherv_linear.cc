// Gatherv, linear: every rank sends its block straight to the root, which receives each at its
// displacement (the gaps stay as they were).
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status gatherv_linear(Context& ctx, const Args& args) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t element = rcc_datatype_size(args.datatype);
  if (rank != args.root)
    return args.count == 0 ? RCC_SUCCESS : ctx.send(args.sendbuf, args.count * element, args.root, tag);
  RequestSet requests(ctx.engine());
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == rank || args.recvcounts[peer] == 0) continue;
    RCC_RETURN_IF_ERROR(ctx.post_recv(requests, at(args.recvbuf, args.rdispls[peer], element),
                                      args.recvcounts[peer] * element, peer, tag));
  }
  uint8_t* own = at(args.recvbuf, args.rdispls[rank], element);
  if (own != args.sendbuf && args.recvcounts[rank] > 0)
    std::memmove(own, args.sendbuf, args.recvcounts[rank] * element);
  return requests.wait_all();
}

double gatherv_linear_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kGathervLinear;
const AlgorithmRow kGathervLinear{Kind::kGatherv, "linear", "", gatherv_linear, gatherv_linear_cost, Needs::kMessages};

}  // namespace rcc::collectives
