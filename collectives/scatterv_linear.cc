// Scatterv, linear: the root sends each rank its block from its displacement.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status scatterv_linear(Context& ctx, const Args& args) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t element = rcc_datatype_size(args.datatype);
  if (rank != args.root)
    return args.count == 0 ? RCC_SUCCESS : ctx.recv(args.recvbuf, args.count * element, args.root, tag);
  RequestSet requests(ctx.engine(), kSendWindow);
  for (int step = 1; step < ranks; ++step) {  // starting after the root, so ranks are served in turn
    const int peer = mod(rank + step, ranks);
    if (args.sendcounts[peer] == 0) continue;
    RCC_RETURN_IF_ERROR(ctx.post_send(requests, at(args.sendbuf, args.sdispls[peer], element),
                                      args.sendcounts[peer] * element, peer, tag));
  }
  const uint8_t* own = at(args.sendbuf, args.sdispls[rank], element);
  if (own != args.recvbuf && args.sendcounts[rank] > 0)
    std::memmove(args.recvbuf, own, args.sendcounts[rank] * element);
  return requests.wait_all();
}

double scatterv_linear_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kScattervLinear;
const AlgorithmRow kScattervLinear{Kind::kScatterv,      "linear",        "", scatterv_linear,
                                   scatterv_linear_cost, Needs::kMessages};

}  // namespace rcc::collectives
