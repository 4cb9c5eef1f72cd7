// Allreduce, recursive doubling: log2(P) exchanges of the whole buffer; latency optimal, for small
// messages. With P not a power of two, the first 2*(P - P') ranks fold pairwise (even into odd)
// before and get the result back after (P' the largest power of two <= P). Partners combine the
// lower rank's data on the left, so both compute the same bits.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status allreduce_recursive_doubling(Context& ctx, const Args& args) {
  const size_t element = rcc_datatype_size(args.datatype), bytes = args.count * element;
  const int ranks = ctx.size(), rank = ctx.rank();
  uint8_t* buf = static_cast<uint8_t*>(args.recvbuf);
  if (args.sendbuf != args.recvbuf) std::memcpy(buf, args.sendbuf, bytes);
  uint8_t* incoming = nullptr;
  RCC_RETURN_IF_ERROR(scratch(0, bytes, &incoming));
  const rcc_op_t op = kernel_op(args.op);

  int power = 1;
  while (power * 2 <= ranks) power *= 2;
  const int extra = ranks - power;
  int virtual_rank;  // rank among the power-of-two participants, -1 if folded out
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {
      RCC_RETURN_IF_ERROR(ctx.send(buf, bytes, rank + 1, ctx.tag(0)));
      virtual_rank = -1;
    } else {
      RCC_RETURN_IF_ERROR(ctx.recv(incoming, bytes, rank - 1, ctx.tag(0)));
      reduce(buf, incoming, buf, args.count, args.datatype, op);
      virtual_rank = rank / 2;
    }
  } else {
    virtual_rank = rank - extra;
  }

  if (virtual_rank >= 0) {
    uint32_t step = 1;
    for (int mask = 1; mask < power; mask <<= 1, ++step) {
      const int virtual_partner = virtual_rank ^ mask;
      const int partner = virtual_partner < extra ? virtual_partner * 2 + 1 : virtual_partner + extra;
      RCC_RETURN_IF_ERROR(ctx.sendrecv(buf, bytes, partner, incoming, bytes, partner, ctx.tag(step)));
      if (partner < rank) {
        reduce(buf, incoming, buf, args.count, args.datatype, op);
      } else {
        reduce(buf, buf, incoming, args.count, args.datatype, op);
      }
    }
  }
  // Every participant divides the same bits the same way, so AVG stays identical too.
  if (virtual_rank >= 0 && args.op == RCC_AVG) scale_divide(buf, args.count, args.datatype, ranks);

  if (rank < 2 * extra) {
    const int tag = ctx.tag(0xffff);
    if (rank % 2 == 1) return ctx.send(buf, bytes, rank - 1, tag);
    return ctx.recv(buf, bytes, rank + 1, tag);
  }
  return RCC_SUCCESS;
}

double allreduce_recursive_doubling_cost(size_t bytes, int ranks) {
  const double n = static_cast<double>(bytes);
  const bool power_of_two = (ranks & (ranks - 1)) == 0;
  const double steps = cost::log2_ceil(ranks) + (power_of_two ? 0 : 1);  // the fold, before and after
  return steps * (cost::alpha() + n / cost::bandwidth() + n / cost::kReduceRate);
}

}  // namespace

extern const AlgorithmRow kAllreduceRecursiveDoubling;
const AlgorithmRow kAllreduceRecursiveDoubling{
    Kind::kAllreduce, "recursive_doubling", "rd", allreduce_recursive_doubling, allreduce_recursive_doubling_cost,
    Needs::kMessages};

}  // namespace rcc::collectives
