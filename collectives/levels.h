// What the hierarchical algorithms share (docs/hierarchy.md): the slices the channels carry between
// hosts, the two host-level steps (reduce every local rank's data into the channels' slices; hand
// the slices to every local rank) and a collective on the cross level.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "collectives/collective.h"
#include "collectives/registry.h"

namespace rcc::collectives {

// Elements [begin, end) of `count` that channel c of `channels` carries between hosts.
inline size_t channel_begin(size_t count, int channels, int c) {
  return count * static_cast<size_t>(c) / static_cast<size_t>(channels);
}
inline size_t channel_end(size_t count, int channels, int c) { return channel_begin(count, channels, c + 1); }
// Channel c's slice as Args take it: the first element and how many.
struct Slice {
  size_t begin;
  size_t count;
};
inline Slice channel_slice(size_t count, int channels, int c) {
  const size_t begin = channel_begin(count, channels, c);
  return {begin, channel_end(count, channels, c) - begin};
}

// How many local ranks carry a reduction of `bytes` between hosts: one (local rank 0) up to
// one_carrier_bytes, else every channel. Open MPI's and NCCL's small collectives likewise use one
// leader or channel: each channel's exchange is a message between hosts, and a small message costs
// its sender about as much as a large one (the network stack runs in the send). Each collective
// sets its limit from measurements (allreduce_hierarchical.cc, reduce_hierarchical.cc).
inline int carriers_for(size_t bytes, size_t one_carrier_bytes, const Levels& levels) {
  return bytes <= one_carrier_bytes ? 1 : levels.channels;
}

// Host level: every local rank's `send` (count elements) reduced over the host's ranks, in local
// rank order, with `op` (a kernel op: not RCC_AVG); local rank c < carriers gets slice c of the
// result (channel_slice(count, carriers, c)) at its place in `out` (a buffer of count elements; may
// be send). carriers: 1..levels.channels; host_reduce_to_channels takes them all. Collective over
// the host's ranks.
Status host_reduce_to_carriers(Context& ctx, int carriers, const void* send, void* out, size_t count,
                               rcc_datatype_t datatype, rcc_op_t op, const char* what);
inline Status host_reduce_to_channels(Context& ctx, const void* send, void* out, size_t count, rcc_datatype_t datatype,
                                      rcc_op_t op, const char* what) {
  return host_reduce_to_carriers(ctx, ctx.levels().channels, send, out, count, datatype, op, what);
}

// Host level: local rank c < carriers holds slice c of `buf` (count elements); afterwards every
// local rank holds all of buf, or only local rank `reader` when it is >= 0. Collective over the
// host's ranks. host_share_channels: every channel carries.
Status host_share_carriers(Context& ctx, int carriers, void* buf, size_t count, size_t element, int reader,
                           const char* what);
inline Status host_share_channels(Context& ctx, void* buf, size_t count, size_t element, int reader, const char* what) {
  return host_share_carriers(ctx, ctx.levels().channels, buf, count, element, reader, what);
}

// The same with a byte range [first, second) of buf per channel (ranges.size() == channels), for
// slices that are not the even split of one buffer.
Status host_share_ranges(Context& ctx, void* buf, size_t bytes, const std::vector<std::pair<size_t, size_t>>& ranges,
                         int reader, const char* what);

// The shared-memory rows the hierarchical algorithms run within a host.
extern const AlgorithmRow kBroadcastShm, kBarrierShm, kAllgatherShm;

// Runs `args` on the host level with `row` (a shared-memory row, or a message-based one).
Status run_on_host(Context& ctx, const Args& args, const AlgorithmRow& row);
// Runs `args` on the cross level with the algorithm the cost model picks for it (every member
// picks the same). Only ranks whose local index is below the channel count may call it.
Status run_on_cross(Context& ctx, const Args& args);

// Pieces of a pipelined hierarchical algorithm (the broadcast's; the allreduce's are smaller, see
// allreduce_hierarchical.cc): large enough that a piece's steps (a segment step
// per slot, a message per channel) are small beside its bytes, small enough that filling and
// draining the pipeline (one piece through the levels the others do not overlap) is a small part
// of the call.
constexpr size_t kLevelPieceBytes = size_t{1} << 20;
// The elements per piece of `piece_bytes` for `count` elements, at most `max_pieces` pieces (tags
// number them).
inline size_t level_piece_elements(size_t count, size_t element, size_t piece_bytes, size_t max_pieces) {
  return std::max({size_t{1}, piece_bytes / element, (count + max_pieces - 1) / max_pieces});
}

// Whole buffers of this thread's for what a hierarchical algorithm holds between its levels, apart
// from scratch()'s slots (which the levels' own algorithms may use meanwhile).
constexpr int kLevelScratchSlots = 2;
Status level_scratch(int slot, size_t bytes, uint8_t** out);

// The ranks on the fullest host (what the host-level passes of a cost model wait for).
inline int most_ranks_per_host(const Levels& levels) {
  return *std::max_element(levels.host_sizes.begin(), levels.host_sizes.end());
}

// The cost model's estimate for the cross level: the cheapest message-based row of `kind` for
// `bytes` per rank on `hosts` ranks. The channels split the bytes between them but share the
// host's link, so together they cost about what one channel moving all of them would.
double cross_cost(Kind kind, size_t bytes, int hosts);
// One pass of `bytes` through a host's shared memory (copy in, step, read out) on `ranks` ranks.
double host_pass_cost(size_t bytes, int ranks);

}  // namespace rcc::collectives
