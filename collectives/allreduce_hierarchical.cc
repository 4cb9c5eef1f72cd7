// Allreduce in levels, for a communicator on several hosts (docs/hierarchy.md): each host reduces
// its ranks' data through its shared-memory segment into one slice per channel (local rank c gets
// slice c), local rank c allreduces slice c with rank c of every other host, then each host hands
// the slices round through its segment. Every local rank below the channel count carries a share
// of the traffic between hosts; each element is reduced once (in local rank order, then as the
// cross level's algorithm does), so every rank gets the same bits.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

Status allreduce_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const rcc_op_t op = kernel_op(args.op);
  RCC_RETURN_IF_ERROR(
      host_reduce_to_channels(ctx, args.sendbuf, args.recvbuf, args.count, args.datatype, op, "allreduce"));
  const int channel = levels.host.rank;
  if (channel < levels.channels) {
    const Slice slice = channel_slice(args.count, levels.channels, channel);
    void* data = at(args.recvbuf, slice.begin, element);
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kAllreduce,
                                               .sendbuf = data,
                                               .recvbuf = data,
                                               .count = slice.count,
                                               .datatype = args.datatype,
                                               .op = op}));
  }
  RCC_RETURN_IF_ERROR(host_share_channels(ctx, args.recvbuf, args.count, element, -1, "allreduce"));
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double allreduce_hierarchical_cost(size_t bytes, const Levels& levels) {
  const int most = most_ranks_per_host(levels);
  return 2 * host_pass_cost(bytes, most) + static_cast<double>(bytes) / cost::kReduceRate +
         cross_cost(Kind::kAllreduce, bytes, levels.hosts);
}

}  // namespace

extern const AlgorithmRow kAllreduceHierarchical;
const AlgorithmRow kAllreduceHierarchical{Kind::kAllreduce,           "hierarchical", "hier",
                                          allreduce_hierarchical,     nullptr,        Needs::kLevels,
                                          allreduce_hierarchical_cost};

}  // namespace rcc::collectives
