// Broadcast in levels (docs/hierarchy.md): the root's host broadcasts through its segment, then
// local rank c of that host broadcasts slice c to rank c of every other host (each channel carries
// a share), and every other host hands the slices round through its segment. A message of several
// pieces is pipelined: while one piece crosses the network, the root's host broadcasts the next
// and the other hosts hand the one before round, so the link is not idle while the segments work.
// A small message goes from the root to one rank of each other host instead (broadcast_small).
#include <algorithm>
#include <span>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

// A small broadcast is one message from the root to the first rank of every other host, then a
// broadcast through each host's segment (the root's own starts once its messages are posted). The
// channels would send a message per channel and hand the slices round once more: three steps in
// turn for another host's ranks instead of two, and a message costs its sender more than a
// segment step does. Small: the root's messages together at most kSmallBytes, to at most
// kSmallHosts hosts (with more, the channels' tree of hosts is fewer steps deep).
constexpr size_t kSmallBytes = size_t{128} << 10;
constexpr int kSmallHosts = 8;

bool is_small(size_t bytes, int hosts) {
  return hosts <= kSmallHosts && bytes * static_cast<size_t>(hosts - 1) <= kSmallBytes;
}

Status broadcast_small(Context& ctx, const Args& args, int root_host) {
  const Levels& levels = ctx.levels();
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  RequestSet requests(ctx.engine());
  Args local = args;
  if (levels.my_host == root_host) {
    if (ctx.rank() == args.root) {
      for (int rank = 0; rank < ctx.size(); ++rank) {  // local rank 0 of every other host
        const auto r = static_cast<size_t>(rank);
        if (levels.host_of[r] == root_host || levels.local_of[r] != 0) continue;
        RCC_RETURN_IF_ERROR(ctx.post_send(requests, args.recvbuf, bytes, rank, ctx.tag(0)));
      }
    }
    local.root = levels.local_of[static_cast<size_t>(args.root)];
  } else {
    if (levels.host.rank == 0) {
      RCC_RETURN_IF_ERROR(ctx.post_recv(requests, args.recvbuf, bytes, args.root, ctx.tag(0)));
      RCC_RETURN_IF_ERROR(requests.wait_all());
    }
    local.root = 0;
  }
  RCC_RETURN_IF_ERROR(run_on_host(ctx, local, kBroadcastShm));
  return requests.wait_all();
}

// Receives posted ahead per channel, so a piece can land while the host hands the one before round.
constexpr size_t kPiecesAhead = 2;

// The pipelined broadcast: a chain of hosts from the root's, each channel passing its slice of
// every piece to the next host as soon as it has it.
Status broadcast_in_pieces(Context& ctx, const Args& args, size_t per_piece) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const int root_host = levels.host_of[static_cast<size_t>(args.root)];
  const int hosts = levels.hosts;
  const int position = mod(levels.my_host - root_host, hosts);  // along the chain
  const int channel = levels.host.rank;
  const bool carrier = channel < levels.channels;
  const size_t pieces = (args.count + per_piece - 1) / per_piece;
  auto piece_count = [&](size_t k) { return std::min(per_piece, args.count - k * per_piece); };
  // This channel's slice of piece k, as bytes of recvbuf.
  auto slice_of = [&](size_t k) {
    const Slice slice = channel_slice(piece_count(k), levels.channels, channel);
    return std::span<uint8_t>(at(args.recvbuf, k * per_piece + slice.begin, element), slice.count * element);
  };
  // On a channel's cross level rank h is host h's; only carriers take part in it.
  Context cross = carrier ? ctx.cross_level() : ctx;
  const int next = (levels.my_host + 1) % hosts, previous = mod(levels.my_host - 1, hosts);
  const bool forwards = carrier && position < hosts - 1;
  RequestSet sends(ctx.engine(), kSendWindow), receives(ctx.engine());
  std::vector<size_t> receive_index(pieces);
  auto post_receive = [&](size_t k) -> Status {
    const std::span<uint8_t> slice = slice_of(k);
    return cross.post_recv(receives, slice.data(), slice.size(), previous, cross.tag(static_cast<uint32_t>(k)),
                           &receive_index[k]);
  };
  if (carrier && position > 0) {
    for (size_t k = 0; k < std::min(pieces, kPiecesAhead); ++k) RCC_RETURN_IF_ERROR(post_receive(k));
  }
  const int local_root = levels.local_of[static_cast<size_t>(args.root)];
  for (size_t k = 0; k < pieces; ++k) {
    void* piece = at(args.recvbuf, k * per_piece, element);
    if (position == 0) {
      Args local = args;
      local.sendbuf = piece;
      local.recvbuf = piece;
      local.count = piece_count(k);
      local.root = local_root;
      RCC_RETURN_IF_ERROR(run_on_host(ctx, local, kBroadcastShm));
    } else if (carrier) {
      RCC_RETURN_IF_ERROR(receives.wait(receive_index[k]));
      if (k + kPiecesAhead < pieces) RCC_RETURN_IF_ERROR(post_receive(k + kPiecesAhead));
    }
    if (forwards) {
      const std::span<uint8_t> slice = slice_of(k);
      RCC_RETURN_IF_ERROR(
          cross.post_send(sends, slice.data(), slice.size(), next, cross.tag(static_cast<uint32_t>(k))));
    }
    if (position > 0) {
      RCC_RETURN_IF_ERROR(host_share_channels(ctx, piece, piece_count(k), element, -1, "broadcast"));
    }
  }
  return sends.wait_all();
}

Status broadcast_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const size_t per_piece = level_piece_elements(args.count, element, kLevelPieceBytes, 65536);  // a tag per piece
  if (args.count > per_piece) return broadcast_in_pieces(ctx, args, per_piece);
  const int root_host = levels.host_of[static_cast<size_t>(args.root)];
  if (is_small(args.count * element, levels.hosts)) return broadcast_small(ctx, args, root_host);
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
  if (is_small(bytes, levels.hosts)) {
    // The root's messages, one after another, then the other hosts' segments.
    return cost::linear_steps(bytes, levels.hosts) + host_pass_cost(bytes, most);
  }
  const double network = cross_cost(Kind::kBroadcast, bytes, levels.hosts);
  if (bytes <= kLevelPieceBytes) return 2 * host_pass_cost(bytes, most) + network;
  // In pieces the levels overlap: the slower paces the call, plus one piece through the others.
  return std::max(network, host_pass_cost(bytes, most)) + 2 * host_pass_cost(kLevelPieceBytes, most);
}

}  // namespace

extern const AlgorithmRow kBroadcastHierarchical;
const AlgorithmRow kBroadcastHierarchical{Kind::kBroadcast,           "hierarchical", "hier",
                                          broadcast_hierarchical,     nullptr,        Needs::kLevels,
                                          broadcast_hierarchical_cost};

}  // namespace rcc::collectives
