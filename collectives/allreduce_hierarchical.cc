// Allreduce in levels, for a communicator on several hosts (docs/hierarchy.md): each host reduces
// its ranks' data through its shared-memory segment into one slice per channel (local rank c gets
// slice c), local rank c allreduces slice c with rank c of every other host, then each host hands
// the slices round through its segment. Every local rank below the channel count carries a share
// of the traffic between hosts (a small message: local rank 0 alone); each element is reduced once
// (in local rank order, then as the cross level's algorithm does), so every rank gets the same
// bits. A message of several pieces is pipelined (allreduce_in_pieces), so the link is not idle
// while the segments work.
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

// Pipelined: from one piece, on at most this many hosts (each channel sends a message to every
// other host per piece), in at most this many pieces (two tags per piece). Pieces are half the
// broadcast's: at 2 x 2 and 2 x 4 ranks over 10 Gbit/s, 512 KiB pieces take 21-25 ms for 16 MiB and
// 1 MiB pieces 25-29 ms (the exchange's parts of 32-64 KiB go eagerly; the pipeline fills sooner).
// 512 KiB itself goes in pieces too (two of 256 KiB at 2 x 2): whole, its cross-level messages of
// 128-256 KiB would each take a rendezvous, and in pieces it mostly runs about 15 % faster. 256 KiB
// (one piece) gains nothing from the pipeline, so it goes whole.
constexpr size_t kAllreducePieceBytes = size_t{512} << 10;
constexpr int kPipelinedHosts = 8;
constexpr size_t kMostPieces = 32768;

bool is_pipelined(size_t bytes, int hosts) { return hosts <= kPipelinedHosts && bytes >= kAllreducePieceBytes; }

// Smaller pieces below 4 MiB, for at least kFewestPieces of them: the pipeline runs two pieces
// behind, so a call of a few pieces spends much of its time filling and draining it. But not below parts
// of kSmallestPartBytes: a small message between hosts costs its sender nearly as much as a larger one (at
// 2 x 4, 1 MiB in pieces of 128 KiB, parts of 16 KiB, takes 2.7-3.3 ms against 1.5-2.1). At 2 x 2
// over 10 Gbit/s, pieces of 256 KiB make 1 and 2 MiB 7-20 % faster than pieces of 512 KiB.
constexpr size_t kFewestPieces = 8;
constexpr size_t kSmallestPartBytes = size_t{64} << 10;
size_t piece_bytes(size_t bytes, const Levels& levels) {
  const size_t smallest = kSmallestPartBytes * static_cast<size_t>(levels.channels) * static_cast<size_t>(levels.hosts);
  return std::min(kAllreducePieceBytes, std::max(bytes / kFewestPieces, smallest));
}

// One carrier per host up to 32 KiB (carriers_for). At 10 Gbit/s one carrier beats every channel
// at 8 B-32 KiB (2 x 2: 22-34 against 27-46 us; 2 x 4: 26-51 against 42-79 us); from 64 KiB every
// channel is ahead (54 against 58 us, 101 against 113).
constexpr size_t kOneCarrierBytes = size_t{32} << 10;

// A piece's requests on the cross level, from its exchange's start to its hand-round.
struct PieceRequests {
  explicit PieceRequests(p2p::Engine& engine)
      : parts_in(engine), parts_out(engine), sums_in(engine), sums_out(engine) {}
  RequestSet parts_in;   // the other hosts' copies of the part this host reduces
  RequestSet parts_out;  // this host's copies of the parts the others reduce
  RequestSet sums_in;    // the other hosts' reduced parts
  RequestSet sums_out;   // this host's reduced part, to every other host
};

// The allreduce in pieces. Piece k goes through three stages: the host reduces it into the
// channels' slices; each channel cuts its slice into a part per host, sends part j to host j
// (which reduces that part of every host's slice, in host order) and gets the reduced parts back;
// the host hands the slices round. Iteration t reduces piece t on the host and starts its
// exchange, finishes piece t-1's, and hands piece t-2 round: pieces t and t-1 cross the link while
// the segment works on t and t-2. Each element is reduced by one rank of one host, so every rank
// gets the same bits.
Status allreduce_in_pieces(Context& ctx, const Args& args, size_t per_piece) {
  const Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const Args reduce_args{.kind = Kind::kReduce, .datatype = args.datatype, .op = kernel_op(args.op)};
  const int hosts = levels.hosts, me = levels.my_host, channel = levels.host.rank;
  const bool carrier = channel < levels.channels;
  const size_t pieces = (args.count + per_piece - 1) / per_piece;
  auto piece_count = [&](size_t k) { return std::min(per_piece, args.count - k * per_piece); };
  // Part j of this channel's slice of piece k, as bytes of recvbuf.
  auto part = [&](size_t k, int j) {
    const Slice slice = channel_slice(piece_count(k), levels.channels, channel);
    const Slice cut = channel_slice(slice.count, hosts, j);
    return std::span<uint8_t>(at(args.recvbuf, k * per_piece + slice.begin + cut.begin, element), cut.count * element);
  };
  // The other hosts' copies of this host's part, for two pieces: a row of largest-part bytes per host.
  auto ceil_div = [](size_t n, size_t d) { return (n + d - 1) / d; };
  const size_t row =
      ceil_div(ceil_div(per_piece, static_cast<size_t>(levels.channels)), static_cast<size_t>(hosts)) * element;
  uint8_t* copies = nullptr;
  if (carrier) RCC_RETURN_IF_ERROR(level_scratch(0, 2 * static_cast<size_t>(hosts) * row, &copies));
  auto copy_of = [&](size_t k, int j) {
    return copies + ((k % 2) * static_cast<size_t>(hosts) + static_cast<size_t>(j)) * row;
  };
  // On a channel's cross level rank j is host j's. Only carriers take part in it (and number its
  // calls); the others never send or receive here.
  Context cross = carrier ? ctx.cross_level() : ctx;
  auto tag = [&](size_t k, uint32_t stage) { return cross.tag(static_cast<uint32_t>(2 * k) + stage); };
  PieceRequests flight[3] = {PieceRequests(ctx.engine()), PieceRequests(ctx.engine()), PieceRequests(ctx.engine())};
  auto requests = [&](size_t k) -> PieceRequests& { return flight[k % 3]; };
  auto post_parts_in = [&](size_t k) -> Status {
    const std::span<uint8_t> mine = part(k, me);
    for (int j = 0; j < hosts && !mine.empty(); ++j) {
      if (j != me) RCC_RETURN_IF_ERROR(cross.post_recv(requests(k).parts_in, copy_of(k, j), mine.size(), j, tag(k, 0)));
    }
    return RCC_SUCCESS;
  };
  // Piece k's exchange, second half: this host's part reduced over the hosts, then sent to each.
  auto reduce_part = [&](size_t k) -> Status {
    PieceRequests& flying = requests(k);
    RCC_RETURN_IF_ERROR(flying.parts_in.wait_all());
    RCC_RETURN_IF_ERROR(flying.parts_out.wait_all());  // their bytes of recvbuf take the reduced parts
    for (int j = 0; j < hosts; ++j) {
      const std::span<uint8_t> theirs = part(k, j);
      if (j != me && !theirs.empty())
        RCC_RETURN_IF_ERROR(cross.post_recv(flying.sums_in, theirs.data(), theirs.size(), j, tag(k, 1)));
    }
    const std::span<uint8_t> mine = part(k, me);
    if (mine.empty()) return RCC_SUCCESS;
    // shm_reduce_in_order's output may be its first or second input only: a later host's own part
    // is reduced from a copy.
    if (me >= 2) std::memcpy(copy_of(k, me), mine.data(), mine.size());
    std::vector<const uint8_t*>& inputs = shm_input_list(hosts);
    for (int j = 0; j < hosts; ++j) inputs[static_cast<size_t>(j)] = j == me && me < 2 ? mine.data() : copy_of(k, j);
    shm_reduce_in_order(mine.data(), inputs.data(), hosts, mine.size() / element, reduce_args);
    for (int j = 0; j < hosts; ++j) {
      if (j != me) RCC_RETURN_IF_ERROR(cross.post_send(flying.sums_out, mine.data(), mine.size(), j, tag(k, 1)));
    }
    return RCC_SUCCESS;
  };
  if (carrier) RCC_RETURN_IF_ERROR(post_parts_in(0));
  for (size_t t = 0; t < pieces + 2; ++t) {
    if (t < pieces) {
      RCC_RETURN_IF_ERROR(host_reduce_to_channels(ctx, at(args.sendbuf, t * per_piece, element),
                                                  at(args.recvbuf, t * per_piece, element), piece_count(t),
                                                  args.datatype, reduce_args.op, "allreduce"));
      for (int j = 0; j < hosts && carrier; ++j) {
        const std::span<uint8_t> theirs = part(t, j);
        if (j != me && !theirs.empty())
          RCC_RETURN_IF_ERROR(cross.post_send(requests(t).parts_out, theirs.data(), theirs.size(), j, tag(t, 0)));
      }
    }
    if (carrier && t >= 1 && t <= pieces) RCC_RETURN_IF_ERROR(reduce_part(t - 1));
    if (t >= 2) {
      const size_t k = t - 2;
      if (carrier) {
        RCC_RETURN_IF_ERROR(requests(k).sums_in.wait_all());
        RCC_RETURN_IF_ERROR(requests(k).sums_out.wait_all());
      }
      RCC_RETURN_IF_ERROR(
          host_share_channels(ctx, at(args.recvbuf, k * per_piece, element), piece_count(k), element, -1, "allreduce"));
    }
    // Piece t+1's copies take piece t-1's place in the scratch, and its requests piece t-2's.
    if (carrier && t + 1 < pieces) RCC_RETURN_IF_ERROR(post_parts_in(t + 1));
  }
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

Status allreduce_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  if (is_pipelined(args.count * element, levels.hosts)) {
    return allreduce_in_pieces(
        ctx, args, level_piece_elements(args.count, element, piece_bytes(args.count * element, levels), kMostPieces));
  }
  const rcc_op_t op = kernel_op(args.op);
  const int carriers = carriers_for(args.count * element, kOneCarrierBytes, levels);
  RCC_RETURN_IF_ERROR(
      host_reduce_to_carriers(ctx, carriers, args.sendbuf, args.recvbuf, args.count, args.datatype, op, "allreduce"));
  const int channel = levels.host.rank;
  if (channel < carriers) {
    const Slice slice = channel_slice(args.count, carriers, channel);
    void* data = at(args.recvbuf, slice.begin, element);
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kAllreduce,
                                               .sendbuf = data,
                                               .recvbuf = data,
                                               .count = slice.count,
                                               .datatype = args.datatype,
                                               .op = op}));
  }
  RCC_RETURN_IF_ERROR(host_share_carriers(ctx, carriers, args.recvbuf, args.count, element, -1, "allreduce"));
  if (args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double allreduce_hierarchical_cost(size_t bytes, const Levels& levels) {
  const int most = most_ranks_per_host(levels);
  auto host_passes = [&](size_t n) { return 2 * host_pass_cost(n, most) + static_cast<double>(n) / cost::kReduceRate; };
  const double network = cross_cost(Kind::kAllreduce, bytes, levels.hosts);
  if (!is_pipelined(bytes, levels.hosts)) return host_passes(bytes) + network;
  // In pieces the levels overlap: the slower paces the call, plus one piece through the others. The
  // pieces' exchange moves a ring's bytes in fewer steps; the cross level's best row stands in for it.
  return std::max(network, host_passes(bytes)) + host_passes(piece_bytes(bytes, levels));
}

}  // namespace

extern const AlgorithmRow kAllreduceHierarchical;
const AlgorithmRow kAllreduceHierarchical{Kind::kAllreduce,           "hierarchical", "hier",
                                          allreduce_hierarchical,     nullptr,        Needs::kLevels,
                                          allreduce_hierarchical_cost};

}  // namespace rcc::collectives
