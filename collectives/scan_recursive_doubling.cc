// Scan and exscan, recursive doubling: at step k each rank swaps with rank ^ 2^k the reduction of
// the 2^k ranks it stands for so far; what comes from a lower rank joins this rank's prefix. lg P
// steps of the whole buffer, any P. Contributions are combined lower ranks first, in the same
// order on every run. RCC_AVG divides the prefix by the number of ranks in it.
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/registry.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

namespace {

Status scan_common(Context& ctx, const Args& args, bool inclusive) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(0);
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  const rcc_op_t op = kernel_op(args.op);
  uint8_t* partial = nullptr;   // the reduction over the ranks this one stands for
  uint8_t* incoming = nullptr;  // the partner's
  RCC_RETURN_IF_ERROR(scratch(0, bytes, &partial));
  RCC_RETURN_IF_ERROR(scratch(1, bytes, &incoming));
  std::memcpy(partial, args.sendbuf, bytes);  // first: in place, recvbuf is sendbuf
  bool have_result = inclusive;
  if (inclusive && args.recvbuf != args.sendbuf) std::memcpy(args.recvbuf, args.sendbuf, bytes);
  for (int mask = 1; mask < ranks; mask <<= 1) {
    const int partner = rank ^ mask;
    if (partner >= ranks) continue;
    RCC_RETURN_IF_ERROR(ctx.sendrecv(partial, bytes, partner, incoming, bytes, partner, tag));
    if (partner < rank) {
      reduce(partial, incoming, partial, args.count, args.datatype, op);
      if (have_result) {
        reduce(args.recvbuf, incoming, args.recvbuf, args.count, args.datatype, op);
      } else {
        std::memcpy(args.recvbuf, incoming, bytes);
        have_result = true;
      }
    } else {
      reduce(partial, partial, incoming, args.count, args.datatype, op);
    }
  }
  const int contributors = inclusive ? rank + 1 : rank;
  if (args.op == RCC_AVG && contributors > 0) scale_divide(args.recvbuf, args.count, args.datatype, contributors);
  return RCC_SUCCESS;
}

Status scan_recursive_doubling(Context& ctx, const Args& args) { return scan_common(ctx, args, true); }
Status exscan_recursive_doubling(Context& ctx, const Args& args) { return scan_common(ctx, args, false); }

double scan_recursive_doubling_cost(size_t bytes, int ranks) {
  return cost::log2_ceil(ranks) * (cost::alpha() + static_cast<double>(bytes) / cost::bandwidth());
}

}  // namespace

extern const AlgorithmRow kScanRecursiveDoubling, kExscanRecursiveDoubling;
const AlgorithmRow kScanRecursiveDoubling{
    Kind::kScan, "recursive_doubling", "rd", scan_recursive_doubling, scan_recursive_doubling_cost, Needs::kMessages};
const AlgorithmRow kExscanRecursiveDoubling{
    Kind::kExscan,   "recursive_doubling", "rd", exscan_recursive_doubling, scan_recursive_doubling_cost,
    Needs::kMessages};

}  // namespace rcc::collectives
