// The two shared-memory reductions behind allreduce_shm and reduce_shm.
//
// One step (2 ranks, or small messages): per chunk of one slot every rank copies its input in;
// after one step each receiver reduces all P inputs in rank order (its own read in place, the same
// bits as its copy). Cost: 1 step per chunk; a receiver reads (P-1)*n bytes another core wrote.
// Split (the rest): per chunk of one slot, rank r copies in the portions others reduce, reduces
// portion r (P-1 kernel passes over chunk/P, its own input read in place), publishes it, and the
// receivers copy all portions out. Cost: 2 steps per chunk; per rank about 2n bytes copied and n
// read by the kernels, however many ranks there are. Every element is reduced by one rank only, so
// all receivers get the same bits.
#include <algorithm>
#include <cstring>

#include "base/fast_tls.h"
#include "collectives/algorithms.h"
#include "collectives/shm_pieces.h"
#include "kernels/reduce_kernels.h"
#include "shm/stream_copy.h"

namespace rcc::collectives {
namespace {

// Start of portion p of a chunk of `count` elements cut into `parts`, on cache-line boundaries so
// that two ranks never write the same line (element sizes are 1, 2, 4 or 8 bytes).
size_t portion_begin(size_t count, int p, int parts, size_t element) {
  const size_t per_line = 64 / element;
  const size_t lines = (count + per_line - 1) / per_line;
  return std::min(count, lines * static_cast<size_t>(p) / static_cast<size_t>(parts) * per_line);
}

// A reduction through the slots, a chunk of one slot at a time.
struct ChunkedReduce : ShmCall {
  ChunkedReduce(Context& ctx, const Args& args, bool everyone_receives)
      : ShmCall(ctx, args), chunk(segment.slot_bytes() / element), receives(everyone_receives || rank == args.root) {}
  const size_t chunk;   // elements per chunk
  const bool receives;  // this rank gets the result
};

}  // namespace

void shm_reduce_in_order(void* out, const uint8_t* const* inputs, int n, size_t count, const Args& args) {
  const rcc_op_t op = kernel_op(args.op);
  if (n == 1) {
    if (out != inputs[0]) std::memcpy(out, inputs[0], count * rcc_datatype_size(args.datatype));
  } else {
    reduce(out, inputs[0], inputs[1], count, args.datatype, op);
    for (int q = 2; q < n; ++q) reduce(out, out, inputs[q], count, args.datatype, op);
  }
  if (args.op == RCC_AVG) scale_divide(out, count, args.datatype, n);
}

std::vector<const uint8_t*>& shm_input_list(int ranks) {
  RCC_FAST_TLS thread_local std::vector<const uint8_t*> inputs;  // read every step
  if (inputs.size() < static_cast<size_t>(ranks)) inputs.resize(static_cast<size_t>(ranks));
  return inputs;
}

bool shm_reduce_in_one_step(size_t bytes, int ranks) {
  // Reading every slot costs (P-1)*n remote bytes per rank, the split form 2(P-1)/P*n and one more
  // step per chunk: equal at P = 2, where the one-step form also makes fewer passes over memory
  // (measured: 1.2-1.4x faster at 1-4 MiB).
  return ranks == 2 || bytes * static_cast<size_t>(ranks) <= 32 * 1024;
}

Status shm_reduce_one_step(Context& ctx, const Args& args, bool everyone_receives) {
  const ChunkedReduce call(ctx, args, everyone_receives);
  shm::Segment& segment = call.segment;
  const int n = call.ranks, rank = call.rank;
  const size_t element = call.element, chunk = call.chunk;
  const bool receives = call.receives;
  const uint8_t* send = call.send;
  uint8_t* recv = call.recv;
  const uint8_t** inputs = shm_input_list(n).data();
  // Out of place and larger than the caches: the result goes out with streaming stores.
  const bool stream_output = receives && args.sendbuf != args.recvbuf && segment.streams_output(args.count * element);
  uint8_t* staging = nullptr;
  if (stream_output) RCC_RETURN_IF_ERROR(scratch(2, chunk * element, &staging));
  for (size_t base = 0; base < args.count; base += chunk) {
    const size_t length = std::min(chunk, args.count - base);
    RCC_RETURN_IF_ERROR(segment.begin(kind_name(args.kind)));
    const uint64_t step = segment.next_step();
    std::memcpy(segment.slot(rank, step), send + base * element, length * element);
    if (!receives) {
      segment.publish();  // reduce: nobody reads what a non-root holds, so it need not wait
      continue;
    }
    RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
    // Own input read in place when it is one of the first two (the kernel may write over those).
    for (int q = 0; q < n; ++q) inputs[q] = q == rank && q < 2 ? send + base * element : segment.slot(q, step);
    if (stream_output) {
      // Reduced in this core's cache, then streamed out: storing into recvbuf directly would first
      // read each of its lines from memory.
      shm_reduce_in_order(staging, inputs, n, length, args);
      shm::copy_streaming(recv + base * element, staging, length * element);
    } else {
      shm_reduce_in_order(recv + base * element, inputs, n, length, args);
    }
  }
  return RCC_SUCCESS;
}

Status shm_reduce_chunks(Context& ctx, const Args& args, bool everyone_receives) {
  const ChunkedReduce call(ctx, args, everyone_receives);
  shm::Segment& segment = call.segment;
  const int n = call.ranks, rank = call.rank;
  const size_t element = call.element, chunk = call.chunk;
  const bool receives = call.receives;
  const uint8_t* send = call.send;
  uint8_t* recv = call.recv;
  std::vector<const uint8_t*>& inputs = shm_input_list(n);
  for (size_t base = 0; base < args.count; base += chunk) {
    const size_t length = std::min(chunk, args.count - base);
    // Step 1: the portions the others reduce go into this rank's slot.
    RCC_RETURN_IF_ERROR(segment.begin(kind_name(args.kind)));
    const uint64_t in_step = segment.next_step();
    uint8_t* mine = segment.slot(rank, in_step);
    for (int p = 0; p < n; ++p) {
      if (p == rank) continue;
      const size_t begin = portion_begin(length, p, n, element), end = portion_begin(length, p + 1, n, element);
      std::memcpy(mine + begin * element, send + (base + begin) * element, (end - begin) * element);
    }
    RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
    // Step 2: reduce portion `rank` of every rank's copy, in rank order, into the next slot (no
    // begin(): the step just taken showed everyone past the step that slot held).
    const size_t begin = portion_begin(length, rank, n, element), end = portion_begin(length, rank + 1, n, element);
    const uint64_t out_step = segment.next_step();
    if (end > begin) {
      for (int q = 0; q < n; ++q) {
        inputs[static_cast<size_t>(q)] =
            q == rank ? send + (base + begin) * element : segment.slot(q, in_step) + begin * element;
      }
      shm_reduce_in_order(segment.slot(rank, out_step) + begin * element, inputs.data(), n, end - begin, args);
    }
    RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
    // Step 3: every portion's result out (this chunk's input is no longer needed, even in place).
    if (!receives) continue;
    for (int p = 0; p < n; ++p) {
      const size_t b = portion_begin(length, p, n, element), e = portion_begin(length, p + 1, n, element);
      std::memcpy(recv + (base + b) * element, segment.slot(p, out_step) + b * element, (e - b) * element);
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
