// Scatter, linear: the root sends each rank its block directly (P-1 messages out of the root).
// In place on the root when recvbuf == sendbuf + root * recvcount.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status scatter_linear(Context& ctx, const Args& args) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t block = args.count * rcc_datatype_size(args.datatype);
  if (rank != args.root) return ctx.recv(args.recvbuf, block, args.root, tag);
  const uint8_t* input = static_cast<const uint8_t*>(args.sendbuf);
  RequestSet requests(ctx.engine(), kSendWindow);
  for (int step = 1; step < ranks; ++step) {
    const int peer = mod(rank + step, ranks);
    RCC_RETURN_IF_ERROR(ctx.post_send(requests, input + peer * block, block, peer, tag));
  }
  if (input + rank * block != args.recvbuf) std::memmove(args.recvbuf, input + rank * block, block);
  return requests.wait_all();
}

double scatter_linear_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kScatterLinear;
const AlgorithmRow kScatterLinear{Kind::kScatter, "linear", "", scatter_linear, scatter_linear_cost, Needs::kMessages};

}  // namespace rcc::collectives
