// Alltoall, pairwise exchange: at step s rank r sends block r+s and receives from r-s; all
// steps are posted at once (distinct buffers), ordered so every rank sends to a different peer.
// count is per peer. In place (sendbuf == recvbuf) goes through a scratch copy of the input.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"

namespace rcc::collectives {

namespace {

Status alltoall_pairwise(Context& ctx, const Args& args) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t block = args.count * rcc_datatype_size(args.datatype);
  const uint8_t* input = static_cast<const uint8_t*>(args.sendbuf);
  uint8_t* output = static_cast<uint8_t*>(args.recvbuf);
  if (args.sendbuf == args.recvbuf) {
    uint8_t* copy = nullptr;
    RCC_RETURN_IF_ERROR(scratch(0, block * ranks, &copy));
    std::memcpy(copy, input, block * ranks);
    input = copy;
  }
  RequestSet requests(ctx.engine());
  for (int step = 1; step < ranks; ++step) {
    const int from = mod(rank - step, ranks);
    RCC_RETURN_IF_ERROR(ctx.post_recv(requests, output + from * block, block, from, tag));
  }
  for (int step = 1; step < ranks; ++step) {
    const int to = mod(rank + step, ranks);
    RCC_RETURN_IF_ERROR(ctx.post_send(requests, input + to * block, block, to, tag));
  }
  std::memcpy(output + rank * block, input + rank * block, block);
  return requests.wait_all();
}

double alltoall_pairwise_cost(size_t bytes, int ranks) { return cost::linear_steps(bytes, ranks); }

}  // namespace

extern const AlgorithmRow kAlltoallPairwise;
const AlgorithmRow kAlltoallPairwise{Kind::kAlltoall,        "pairwise",      "", alltoall_pairwise,
                                     alltoall_pairwise_cost, Needs::kMessages};

}  // namespace rcc::collectives
