// Broadcast in levels (docs/hierarchy.md): the root's host broadcasts through its segment, then
// local rank c of that host broadcasts slice c to rank c of every other host (each channel carries
// a share), and every other host hands the slices round through its segment.
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

Status broadcast_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const int root_host = levels.host_of[static_cast<size_t>(args.root)];
  const bool at_root_host = levels.my_host == root_host;
  if (at_root_host) {
    Args local = args;
    local.root = levels.local_of[static_cast<size_t>(args.root)];
    RCC_RETURN_IF_ERROR(run_on_host(ctx, local, kBroadcastShm));
  }
  const int channel = levels.host.rank;
  if (channel < levels.channels) {
    const Slice slice = channel_slice(args.count, levels.channels, channel);
    void* data = at(args.recvbuf, slice.begin, element);
    // On a channel's cross level, rank h is host h's.
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kBroadcast,
                                               .sendbuf = data,
                                               .recvbuf = data,
                                               .count = slice.count,
                                               .datatype = args.datatype,
                                               .root = root_host}));
  }
  if (!at_root_host) RCC_RETURN_IF_ERROR(host_share_channels(ctx, args.recvbuf, args.count, element, -1, "broadcast"));
  return RCC_SUCCESS;
}

double broadcast_hierarchical_cost(size_t bytes, const Levels& levels) {
  const int most = most_ranks_per_host(levels);
  return 2 * host_pass_cost(bytes, most) + cross_cost(Kind::kBroadcast, bytes, levels.hosts);
}

}  // namespace

extern const AlgorithmRow kBroadcastHierarchical;
const AlgorithmRow kBroadcastHierarchical{Kind::kBroadcast,           "hierarchical", "hier",
                                          broadcast_hierarchical,     nullptr,        Needs::kLevels,
                                          broadcast_hierarchical_cost};

}  // namespace rcc::collectives
