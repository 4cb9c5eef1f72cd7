// Reduce-scatter in levels (docs/hierarchy.md), for a communicator whose hosts' ranks are
// consecutive: each host reduces the whole input of its ranks into one slice per channel through
// its segment, local rank c reduce-scatters slice c with rank c of every other host (each host gets
// the part of the slice that holds its ranks' blocks), and each host hands those parts round
// through its segment; every rank keeps its block.
#include <cstring>
#include <limits>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

Status reduce_scatter_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  if (!levels.blocked) {
    return fail(RCC_ERR_INVALID_USAGE,
                "reduce_scatter:hierarchical needs each host's ranks to be consecutive ranks of the communicator");
  }
  const size_t element = rcc_datatype_size(args.datatype);
  const rcc_op_t op = kernel_op(args.op);
  const size_t total = args.count * static_cast<size_t>(ctx.size());
  const size_t hosts = static_cast<size_t>(levels.hosts);
  // Host h's ranks' blocks: elements [first[h], first[h + 1]) of the input.
  std::vector<size_t> first(hosts + 1, 0);
  for (size_t h = 0; h < hosts; ++h) first[h + 1] = first[h] + static_cast<size_t>(levels.host_sizes[h]) * args.count;
  const size_t mine = static_cast<size_t>(levels.my_host);
  uint8_t* slices = nullptr;
  uint8_t* part = nullptr;  // this host's blocks, reduced over every rank
  RCC_RETURN_IF_ERROR(level_scratch(0, total * element, &slices));
  RCC_RETURN_IF_ERROR(level_scratch(1, (first[mine + 1] - first[mine]) * element, &part));

  // 1. The host's sum of everything, one slice per channel.
  RCC_RETURN_IF_ERROR(host_reduce_to_channels(ctx, args.sendbuf, slices, total, args.datatype, op, "reduce_scatter"));
  // 2. Slice c between hosts: each host gets the part of it that holds its ranks' blocks.
  auto overlap = [&](size_t h, int c, size_t* lo, size_t* hi) {
    *lo = std::max(first[h], channel_begin(total, levels.channels, c));
    *hi = std::max(*lo, std::min(first[h + 1], channel_end(total, levels.channels, c)));
  };
  const int channel = levels.host.rank;
  if (channel < levels.channels) {
    std::vector<size_t> counts(hosts);
    size_t lo = 0, hi = 0;
    for (size_t h = 0; h < hosts; ++h) {
      overlap(h, channel, &lo, &hi);
      counts[h] = hi - lo;
    }
    overlap(mine, channel, &lo, &hi);
    const size_t begin = channel_begin(total, levels.channels, channel);
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kReduceScatterv,
                                               .sendbuf = slices + begin * element,
                                               .recvbuf = part + (lo - first[mine]) * element,
                                               .count = channel_end(total, levels.channels, channel) - begin,
                                               .datatype = args.datatype,
                                               .op = op,
                                               .recvcounts = counts.data()}));
  }
  // 3. The host's parts to every local rank; each keeps its block.
  std::vector<std::pair<size_t, size_t>> ranges(static_cast<size_t>(levels.channels));
  for (int c = 0; c < levels.channels; ++c) {
    size_t lo = 0, hi = 0;
    overlap(mine, c, &lo, &hi);
    ranges[static_cast<size_t>(c)] = {(lo - first[mine]) * element, (hi - first[mine]) * element};
  }
  RCC_RETURN_IF_ERROR(
      host_share_ranges(ctx, part, (first[mine + 1] - first[mine]) * element, ranges, -1, "reduce_scatter"));
  const size_t local = static_cast<size_t>(levels.host.rank);
  std::memcpy(args.recvbuf, part + local * args.count * element, args.count * element);
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double reduce_scatter_hierarchical_cost(size_t bytes, const Levels& levels) {
  if (!levels.blocked) return std::numeric_limits<double>::infinity();
  const int most = most_ranks_per_host(levels);
  const size_t all = bytes * levels.host_of.size();
  return host_pass_cost(all, most) + static_cast<double>(all) / cost::kReduceRate +
         cross_cost(Kind::kReduceScatter, bytes * static_cast<size_t>(most), levels.hosts) +
         host_pass_cost(bytes * static_cast<size_t>(most), most);
}

}  // namespace

extern const AlgorithmRow kReduceScatterHierarchical;
const AlgorithmRow kReduceScatterHierarchical{Kind::kReduceScatter,
                                              "hierarchical",
                                              "hier",
                                              reduce_scatter_hierarchical,
                                              nullptr,
                                              Needs::kLevels,
                                              reduce_scatter_hierarchical_cost};

}  // namespace rcc::collectives
