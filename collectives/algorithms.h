// The building blocks the algorithms share. Every algorithm is a file of its own with its row in
// the table (registry.h); each runs inside the communicator's executor (one collective at a
// time), uses only engine send/receive (or the shared-memory segment), and returns with nothing
// left in flight. Callers guarantee validated arguments and count > 0 (count 0 is handled before
// dispatch).
#pragma once

#include "collectives/collective.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

using kernels::reduce;
using kernels::reduce_into;
using kernels::scale_divide;

// ---- Building blocks shared by several algorithms (ring.cc, tree.cc) ----

// Ring reduce-scatter over the blocks of `layout`: rank r ends with block r reduced over all ranks,
// written to own_out. Each block is reduced once along the ring, so every rank's copy of it would
// be the same bits. Pipelined in segments, with the segments of a step in flight together.
Status ring_reduce_scatter(Context& ctx, const void* send, void* own_out, const BlockLayout& layout,
                           rcc_datatype_t datatype, rcc_op_t op, uint32_t phase);
// Ring allgather in place: buf holds block r of `layout` at its offset; fills the others. Every
// receive is posted up front (they land in distinct places) and forwarded as it arrives.
Status ring_allgather(Context& ctx, void* buf, const BlockLayout& layout, size_t element_bytes, uint32_t phase);
// Binomial-tree reduce to root, pipelined in segments. result: where the root puts the result
// (may equal send); on other ranks it may be null (scratch is used) or a buffer to accumulate in.
Status tree_reduce(Context& ctx, const void* send, void* result, size_t count, rcc_datatype_t datatype, rcc_op_t op,
                   int root, uint32_t phase);
// Broadcast from root down a binomial tree (chain = false) or a chain (chain = true), pipelined in
// segments: a rank forwards each segment as soon as it has it.
Status tree_broadcast(Context& ctx, void* buf, size_t bytes, int root, bool chain, uint32_t phase);

// Reduce through shared memory in chunks of P/(P-1) slots: rank r reduces portion r of each chunk
// (reading the others' copies of it from their slots, its own straight from send) and publishes
// the result; then the ranks that receive (all, or only root) copy every portion out.
Status shm_reduce_chunks(Context& ctx, const Args& args, bool everyone_receives);
// Reduce in one step per chunk: every rank copies its input in, and the receivers reduce all
// inputs in rank order (so every rank computes the same bits).
Status shm_reduce_one_step(Context& ctx, const Args& args, bool everyone_receives);
// out = inputs[0] op inputs[1] op ... op inputs[n-1], in that order (RCC_AVG divided at the end).
// out may be inputs[0] or inputs[1], not a later one.
void shm_reduce_in_order(void* out, const uint8_t* const* inputs, int n, size_t count, const Args& args);
// A per-thread list of at least `ranks` input pointers, reused across calls (no allocation per call).
std::vector<const uint8_t*>& shm_input_list(int ranks);
// Allreduce straight between the ranks' buffers when every rank's came from rcc_mem_alloc
// (shm_shared_buffers.cc); *done false (and nothing written) when some rank's did not. Collective.
Status shm_allreduce_shared_buffers(Context& ctx, const Args& args, bool* done);
// Which of the two a reduction of `bytes` per rank on `ranks` ranks uses.
bool shm_reduce_in_one_step(size_t bytes, int ranks);
// Allreduce through shared memory: one of the two above, chosen by size, rank count and, for 2
// ranks and large messages, whether every rank reduces in place (shm_reduce.cc).
Status shm_allreduce(Context& ctx, const Args& args);

}  // namespace rcc::collectives
