// Gather, linear: every rank sends its block straight to the root (P-1 messages into the root;
// bandwidth bound there anyway). In place on the root when sendbuf == recvbuf + root * sendcount.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status gather_linear(Context& ctx, const Args& args) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t block = args.count * rcc_datatype_size(args.datatype);
  if (rank != args.root) return ctx.send(args.sendbuf, block, args.root, tag);
  uint8_t* output = static_cast<uint8_t*>(args.recvbuf);
  RequestSet requests(ctx.engine());
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == rank) continue;
    RCC_RETURN_IF_ERROR(ctx.post_recv(requests, output + peer * block, block, peer, tag));
  }
  if (output + rank * block != args.sendbuf) std::memmove(output + rank * block, args.sendbuf, block);
  return requests.wait_all();
}

double gather_linear_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kGatherLinear;
const AlgorithmRow kGatherLinear{Kind::kGather, "linear", "", gather_linear, gather_linear_cost, Needs::kMessages};

}  // namespace rcc::collectives
