// The two shared-memory reductions behind allreduce_shm and reduce_shm.
//
// One step (2 ranks, or small messages): per chunk of one slot every rank copies its input in;
// after one step each receiver reduces all P inputs in rank order (its own read in place, the same
// bits as its copy). Cost: 1 step per chunk; a receiver reads (P-1)*n bytes another core wrote.
// Split (the rest): per chunk of P/(P-1) slots, rank r copies in the portions others reduce (packed
// one after another), reduces portion r (P-1 kernel passes over chunk/P, its own input read in
// place), publishes it, and the receivers copy all portions out. Cost: 2 steps per chunk; per rank
// about 2n bytes copied and n read by the kernels, however many ranks there are. Every element is
// reduced by one rank only, so all receivers get the same bits. The split form's kernel writes its
// result into a small private buffer and copies each block of it into the slot (see kStagingBytes).
//
// A 2-rank allreduce larger than the caches takes the split form unless every rank reduces in
// place: out of place, one step makes each rank reduce everything and write all of it to memory it
// first reads, while the split form halves the kernel work (1.1-1.4x faster at 16-64 MiB); in
// place, one step stays 1.05-1.3x faster. In-place is each rank's own choice, so the ranks tell
// each other theirs with the first chunk (Segment::set_note), which always goes the split way, and
// take the same form for the rest.
//
// From 16 KiB the first step's notes also say whether each rank's buffers came from rcc_mem_alloc;
// when they all did, the next allreduce moves straight between them (shm_shared_buffers.cc).
#include <algorithm>
#include <cstring>

#include "base/fast_tls.h"
#include "collectives/algorithms.h"
#include "collectives/shm_pieces.h"
#include "kernels/reduce_kernels.h"
#include "shm/shared_buffers.h"
#include "shm/stream_copy.h"

namespace rcc::collectives {
namespace {

// Elements per chunk of the split form: every rank's slot holds the n-1 portions it copies in, so a
// chunk is n/(n-1) slots (two at 2 ranks) in whole cache lines; no portion exceeds
// ceil(lines/n) <= slot_lines/(n-1) lines, so n-1 of them fit one slot (one rank: its result does).
size_t split_chunk_elements(size_t slot_bytes, int n, size_t element) {
  const size_t slot_lines = slot_bytes / 64, parts = static_cast<size_t>(n);
  if (parts == 1) return slot_lines * (64 / element);
  return parts * (slot_lines / (parts - 1)) * (64 / element);
}

// A reduction through the slots.
struct ChunkedReduce : ShmCall {
  ChunkedReduce(Context& ctx, const Args& args, bool everyone_receives)
      : ShmCall(ctx, args),
        one_step_chunk(segment.slot_bytes() / element),
        split_chunk_length(split_chunk_elements(segment.slot_bytes(), ranks, element)),
        receives(everyone_receives || rank == args.root),
        inputs(shm_input_list(ranks).data()) {}
  const size_t one_step_chunk;      // elements per chunk of the one-step form (one slot)
  const size_t split_chunk_length;  // elements per chunk of the split form
  const bool receives;              // this rank gets the result
  const uint8_t** const inputs;     // the kernel's inputs, one per rank, set per chunk
};

// The split form reduces this many bytes at a time into a private buffer (it stays in the first-level
// cache; of 4-64 KiB blocks, 32 and 64 KiB do best), then copies them into its slot. Storing the
// kernel's result straight into the slot makes the reduce phase about 1.6x slower (2 ranks, 8 MiB)
// and the 2-rank allreduce 1.1-1.4x slower at 8-64 MiB. The likely cause: the slot's lines were
// last read by the other ranks, so a kernel storing there has each store wait for those copies to
// be dropped while it also loads from two streams, one of them another core's; memcpy's stores of
// a block from this core's cache do not hold up loads. A multiple of every element size.
constexpr size_t kStagingBytes = 32 * 1024;

// From this size a 2-rank allreduce reduces in halves unless every rank works in place (above):
// where both ranks' inputs and outputs (4n) no longer fit a 32 MiB last-level cache.
constexpr size_t kSplitUnlessInPlaceBytes = size_t{8} << 20;

// From shm::kSharedFromBytes (smaller allocations are not shared) an allreduce whose buffers on
// every rank came from rcc_mem_alloc moves the data straight between them (shm_shared_buffers.cc):
// at 2 ranks it takes about 0.7x the time of the slots at 16 KiB and a quarter to a third at
// 256 KiB; at 8 KiB the two cost the same.

// The AND of every rank's note for `step`, read after the step (notes in shm_allreduce).
uint64_t agreed_notes(const shm::Segment& segment, uint64_t step) {
  uint64_t all = ~uint64_t{0};
  for (int q = 0; q < segment.size(); ++q) all &= segment.note(q, step);
  return all;
}

// shm_allreduce's notes with the first chunk.
constexpr uint64_t kNoteInPlace = 1;
constexpr uint64_t kNoteSharedBuffers = 2;

// Whether both of this rank's buffers came from rcc_mem_alloc.
bool shared_buffers(const Args& args, size_t bytes) {
  shm::SharedPlace place;
  return shm::find_shared(args.sendbuf, bytes, &place) && shm::find_shared(args.recvbuf, bytes, &place);
}

// The one-step form over elements [from, count). With `agreed`, also reads the ranks' notes (set
// before the first chunk) after the first chunk's step.
Status one_step_chunks(const ChunkedReduce& call, const Args& args, size_t from, uint64_t* agreed = nullptr) {
  shm::Segment& segment = call.segment;
  const int n = call.ranks, rank = call.rank;
  const size_t element = call.element, chunk = call.one_step_chunk;
  const uint8_t* send = call.send;
  uint8_t* recv = call.recv;
  const uint8_t** inputs = call.inputs;
  // Out of place and larger than the caches: the result goes out with streaming stores.
  const bool stream_output =
      call.receives && args.sendbuf != args.recvbuf && segment.streams_output(args.count * element);
  uint8_t* staging = nullptr;
  if (stream_output) RCC_RETURN_IF_ERROR(scratch(2, chunk * element, &staging));
  for (size_t base = from; base < args.count; base += chunk) {
    const size_t length = std::min(chunk, args.count - base);
    RCC_RETURN_IF_ERROR(segment.begin(kind_name(args.kind)));
    const uint64_t step = segment.next_step();
    std::memcpy(segment.slot(rank, step), send + base * element, length * element);
    if (!call.receives) {
      segment.publish();  // reduce: nobody reads what a non-root holds, so it need not wait
      continue;
    }
    RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
    if (agreed != nullptr && base == from) *agreed = agreed_notes(segment, step);
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

// One chunk of the split form: elements [base, base + length). With `agreed`, also reads the
// ranks' notes (set before this chunk) once every rank has arrived at the first step: no rank can
// set another before this one arrives at the second.
Status split_chunk(const ChunkedReduce& call, const Args& args, size_t base, size_t length, uint64_t* agreed) {
  shm::Segment& segment = call.segment;
  const int n = call.ranks, rank = call.rank;
  const size_t element = call.element;
  const uint8_t* send = call.send;
  const uint8_t** inputs = call.inputs;
  // Where portion p sits in the slot of `holder`, which packs the portions it copies in (all but
  // its own) one after another.
  const auto packed = [&](int p, int holder) {
    const size_t begin = shm_portion_begin(length, p, n, element);
    if (p < holder) return begin;
    return begin - (shm_portion_begin(length, holder + 1, n, element) - shm_portion_begin(length, holder, n, element));
  };
  uint8_t* staging = nullptr;  // before the first step: failing later would leave the others waiting
  RCC_RETURN_IF_ERROR(scratch(3, kStagingBytes, &staging));
  // Step 1: the portions the others reduce go into this rank's slot.
  RCC_RETURN_IF_ERROR(segment.begin(kind_name(args.kind)));
  const uint64_t in_step = segment.next_step();
  uint8_t* mine = segment.slot(rank, in_step);
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    const size_t begin = shm_portion_begin(length, p, n, element), end = shm_portion_begin(length, p + 1, n, element);
    std::memcpy(mine + packed(p, rank) * element, send + (base + begin) * element, (end - begin) * element);
  }
  RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
  if (agreed != nullptr) *agreed = agreed_notes(segment, in_step);
  // Step 2: reduce portion `rank` of every rank's copy, in rank order, into the start of the next
  // slot (no begin(): the step just taken showed everyone past the step that slot held), a block
  // of kStagingBytes at a time through `staging`.
  const size_t begin = shm_portion_begin(length, rank, n, element),
               end = shm_portion_begin(length, rank + 1, n, element);
  const uint64_t out_step = segment.next_step();
  // One rank has nothing to reduce: its input is copied into the slot at once.
  const bool staged = n > 1;
  uint8_t* result = segment.slot(rank, out_step);
  const size_t per_block = staged ? kStagingBytes / element : end - begin;
  for (size_t done = 0; begin + done < end; done += per_block) {
    const size_t block = std::min(per_block, end - begin - done);
    for (int q = 0; q < n; ++q) {
      inputs[q] = q == rank ? send + (base + begin + done) * element
                            : segment.slot(q, in_step) + (packed(rank, q) + done) * element;
    }
    uint8_t* to = result + done * element;
    shm_reduce_in_order(staged ? staging : to, inputs, n, block, args);
    if (staged) std::memcpy(to, staging, block * element);
  }
  RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
  // Step 3: every portion's result out (this chunk's input is no longer needed, even in place).
  if (!call.receives) return RCC_SUCCESS;
  for (int p = 0; p < n; ++p) {
    const size_t b = shm_portion_begin(length, p, n, element), e = shm_portion_begin(length, p + 1, n, element);
    std::memcpy(call.recv + (base + b) * element, segment.slot(p, out_step), (e - b) * element);
  }
  return RCC_SUCCESS;
}

// The split form over elements [from, count); `agreed` as in one_step_chunks.
Status split_chunks(const ChunkedReduce& call, const Args& args, size_t from, uint64_t* agreed = nullptr) {
  const size_t chunk = call.split_chunk_length;
  for (size_t base = from; base < args.count; base += chunk) {
    RCC_RETURN_IF_ERROR(
        split_chunk(call, args, base, std::min(chunk, args.count - base), base == from ? agreed : nullptr));
  }
  return RCC_SUCCESS;
}

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
  return one_step_chunks(call, args, 0);
}

Status shm_reduce_chunks(Context& ctx, const Args& args, bool everyone_receives) {
  const ChunkedReduce call(ctx, args, everyone_receives);
  return split_chunks(call, args, 0);
}

Status shm_allreduce(Context& ctx, const Args& args) {
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  shm::Segment& segment = ctx.shm();
  // Buffers from rcc_mem_alloc: straight between them when the last allreduce that could showed
  // every rank's to be such (notes below), so that ranks with private buffers pay no step more.
  const bool may_share = bytes >= shm::kSharedFromBytes && ctx.size() > 1 && segment.shares_buffers();
  if (may_share && segment.buffers_were_shared()) {
    bool done = false;
    RCC_RETURN_IF_ERROR(shm_allreduce_shared_buffers(ctx, args, &done));
    if (done) return RCC_SUCCESS;
  }
  const bool two_large = ctx.size() == 2 && bytes >= kSplitUnlessInPlaceBytes;
  if (!may_share && !two_large) {
    if (shm_reduce_in_one_step(bytes, ctx.size())) return shm_reduce_one_step(ctx, args, true);
    return shm_reduce_chunks(ctx, args, true);
  }
  // Each rank's note for the first step: bit 0, it works in place; bit 1, its buffers are shared.
  // begin() first: a note may be set only once every rank arrived at this rank's last step, which
  // a one-sided collective before this one (scatterv, gatherv) may not have waited for.
  const ChunkedReduce call(ctx, args, true);
  RCC_RETURN_IF_ERROR(segment.begin("allreduce"));
  segment.set_note((args.sendbuf == args.recvbuf ? kNoteInPlace : 0) |
                   (may_share && shared_buffers(args, bytes) ? kNoteSharedBuffers : 0));
  uint64_t agreed = 0;
  if (two_large) {
    const size_t first = std::min(call.split_chunk_length, args.count);
    RCC_RETURN_IF_ERROR(split_chunk(call, args, 0, first, &agreed));
    RCC_RETURN_IF_ERROR((agreed & kNoteInPlace) != 0 ? one_step_chunks(call, args, first)
                                                     : split_chunks(call, args, first));
  } else if (shm_reduce_in_one_step(bytes, ctx.size())) {
    RCC_RETURN_IF_ERROR(one_step_chunks(call, args, 0, &agreed));
  } else {
    RCC_RETURN_IF_ERROR(split_chunks(call, args, 0, &agreed));
  }
  if (may_share) segment.remember_buffers_shared((agreed & kNoteSharedBuffers) != 0);
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
