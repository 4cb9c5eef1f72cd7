// Allgather in levels (docs/hierarchy.md): each host gathers its ranks' blocks through its segment
// (the host's block), local rank c exchanges slice c of every host's block with rank c of every
// other host (an allgatherv on the cross level), and each host hands the other hosts' slices
// round through its segment. The blocks land in rank order; when a host's ranks are not
// consecutive, they are gathered host by host in scratch and put in place at the end.
#include <cstring>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

Status allgather_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const size_t block = args.count * element;
  const size_t hosts = static_cast<size_t>(levels.hosts);
  // Every host's blocks in local order, hosts one after another (offsets in elements).
  std::vector<size_t> offsets(hosts), sizes(hosts);
  size_t total = 0;
  for (size_t h = 0; h < hosts; ++h) {
    offsets[h] = total;
    sizes[h] = static_cast<size_t>(levels.host_sizes[h]) * args.count;
    total += sizes[h];
  }
  uint8_t* gathered = static_cast<uint8_t*>(args.recvbuf);
  if (!levels.blocked) RCC_RETURN_IF_ERROR(level_scratch(0, total * element, &gathered));
  const size_t mine = static_cast<size_t>(levels.my_host);
  uint8_t* my_block = gathered + offsets[mine] * element;

  // 1. This host's blocks.
  if (levels.host.size == 1) {
    if (my_block != args.sendbuf) std::memmove(my_block, args.sendbuf, block);
  } else {
    RCC_RETURN_IF_ERROR(run_on_host(ctx,
                                    Args{.kind = Kind::kAllgather,
                                         .sendbuf = args.sendbuf,
                                         .recvbuf = my_block,
                                         .count = args.count,
                                         .datatype = args.datatype},
                                    kAllgatherShm));
  }
  // 2. Slice c of every host's blocks, between hosts.
  const int channel = levels.host.rank;
  if (channel < levels.channels) {
    std::vector<size_t> counts(hosts), displs(hosts);
    size_t moved = 0;
    for (size_t h = 0; h < hosts; ++h) {
      const size_t begin = channel_begin(sizes[h], levels.channels, channel);
      counts[h] = channel_end(sizes[h], levels.channels, channel) - begin;
      displs[h] = offsets[h] + begin;
      moved += counts[h];
    }
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kAllgatherv,
                                               .sendbuf = gathered + displs[mine] * element,
                                               .recvbuf = gathered,
                                               .count = moved,
                                               .datatype = args.datatype,
                                               .recvcounts = counts.data(),
                                               .rdispls = displs.data()}));
  }
  // 3. The other hosts' blocks, host by host, to every local rank.
  for (size_t h = 0; h < hosts; ++h) {
    if (h == mine) continue;
    RCC_RETURN_IF_ERROR(host_share_channels(ctx, gathered + offsets[h] * element, sizes[h], element, -1, "allgather"));
  }
  if (!levels.blocked) {
    for (int r = 0; r < ctx.size(); ++r) {
      const size_t from = offsets[static_cast<size_t>(levels.host_of[static_cast<size_t>(r)])] +
                          static_cast<size_t>(levels.local_of[static_cast<size_t>(r)]) * args.count;
      std::memcpy(at(args.recvbuf, static_cast<size_t>(r) * args.count, element), gathered + from * element, block);
    }
  }
  return RCC_SUCCESS;
}

double allgather_hierarchical_cost(size_t bytes, const Levels& levels) {
  const int most = most_ranks_per_host(levels);
  const size_t all = bytes * levels.host_of.size();
  // In: the host's blocks; between hosts: every host's block once per host link; out: the rest.
  return host_pass_cost(bytes * static_cast<size_t>(most), most) + host_pass_cost(all, most) +
         cross_cost(Kind::kAllgather, bytes * static_cast<size_t>(most), levels.hosts);
}

}  // namespace

extern const AlgorithmRow kAllgatherHierarchical;
const AlgorithmRow kAllgatherHierarchical{Kind::kAllgather,           "hierarchical", "hier",
                                          allgather_hierarchical,     nullptr,        Needs::kLevels,
                                          allgather_hierarchical_cost};

}  // namespace rcc::collectives
