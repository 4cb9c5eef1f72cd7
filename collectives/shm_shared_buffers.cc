// Allreduce straight between the ranks' buffers, when every rank's buffers came from rcc_mem_alloc
// (shm/shared_buffers.h): rank r reduces portion r of all the inputs, read where they lie, and
// writes the result into every rank's output. No byte goes through the slots, where private
// buffers take a copy in and one out (docs/shared-memory.md has the measurements).
//
// One step to show each other the buffers (and to be sure every rank is inside the call, so its
// output may be written and its input will not change), the work, one step so that no rank returns
// before everyone wrote into its output and finished reading its input. shm_allreduce (shm_reduce.cc)
// tries this form only after an allreduce found every rank's buffers shared.
#include <cstring>
#include <vector>

#include "base/fast_tls.h"
#include "collectives/algorithms.h"
#include "collectives/shm_pieces.h"
#include "shm/shared_buffers.h"

namespace rcc::collectives {
namespace {

// What each rank posts in its slot: whether both its buffers are shared, and where.
struct PostedBuffers {
  uint64_t shared;  // 1: both below are set
  shm::SharedPlace send;
  shm::SharedPlace recv;
};

// Each rank reduces its portion this many bytes at a time into its own output, then copies the
// block (still in its cache) into the other outputs: at 2 ranks, 1-64 MiB, 1.1-1.5x faster out of
// place than reducing 32 KiB blocks into a private buffer and copying that to every output, 1.4-2x
// in place; 128 KiB blocks are up to 1.4x faster than 32 KiB ones from 8 MiB.
constexpr size_t kDirectBlockBytes = 128 * 1024;
// In place on a rank whose input the kernel reads after writing its first result (rank >= 2): a
// block goes through a private buffer, all of it read before any of it is written.
constexpr size_t kPrivateBlockBytes = 32 * 1024;

// Where this call reads and writes, per rank; kept per thread so that no call allocates.
struct CallBuffers {
  std::vector<const uint8_t*> inputs;
  std::vector<uint8_t*> outputs;
};
CallBuffers& call_buffers(int ranks) {
  RCC_FAST_TLS thread_local CallBuffers buffers;
  buffers.inputs.resize(static_cast<size_t>(ranks));
  buffers.outputs.resize(static_cast<size_t>(ranks));
  return buffers;
}

}  // namespace

Status shm_allreduce_shared_buffers(Context& ctx, const Args& args, bool* done) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const int n = call.ranks, rank = call.rank;
  const size_t element = call.element, bytes = args.count * element;
  uint8_t* staging = nullptr;  // before the first step: failing later would leave the others waiting
  RCC_RETURN_IF_ERROR(scratch(3, kPrivateBlockBytes, &staging));
  CallBuffers& mapped = call_buffers(n);
  std::vector<const uint8_t*>& inputs = mapped.inputs;
  std::vector<uint8_t*>& outputs = mapped.outputs;
  const uint8_t** block_inputs = shm_input_list(n).data();

  RCC_RETURN_IF_ERROR(segment.begin("allreduce"));
  const uint64_t step = segment.next_step();
  PostedBuffers mine{};
  mine.shared = shm::find_shared(args.sendbuf, bytes, &mine.send) && shm::find_shared(args.recvbuf, bytes, &mine.recv);
  std::memcpy(segment.slot(rank, step), &mine, sizeof mine);
  RCC_RETURN_IF_ERROR(segment.step("allreduce"));
  // What each rank posted stays in its slot for `step` until every rank arrived at step + 1.
  const auto posted_by = [&](int q) {
    PostedBuffers theirs;
    std::memcpy(&theirs, segment.slot(q, step), sizeof theirs);
    return theirs;
  };
  for (int q = 0; q < n; ++q) {
    if (posted_by(q).shared != 1) {
      *done = false;  // some rank's buffers are private: the slots' forms run, every rank alike
      return RCC_SUCCESS;
    }
  }
  for (int q = 0; q < n; ++q) {
    const size_t at = static_cast<size_t>(q);
    if (q == rank) {
      inputs[at] = call.send;
      outputs[at] = call.recv;
      continue;
    }
    const PostedBuffers theirs = posted_by(q);
    uint8_t* input = nullptr;
    RCC_RETURN_IF_ERROR(segment.map_buffer(q, theirs.send, &input, "allreduce"));
    inputs[at] = input;
    RCC_RETURN_IF_ERROR(segment.map_buffer(q, theirs.recv, &outputs[at], "allreduce"));
  }
  const size_t begin = shm_portion_begin(args.count, rank, n, element);
  const size_t end = shm_portion_begin(args.count, rank + 1, n, element);
  // Straight into this rank's output, then from there (in this core's cache) into the others':
  // unless this rank works in place and its input is not among the first two the kernel reads (its
  // output would overwrite it before the kernel reads it), where the block goes through `staging`.
  const bool direct = call.send != call.recv || rank < 2;
  const size_t per_block = (direct ? kDirectBlockBytes : kPrivateBlockBytes) / element;
  for (size_t first = begin; first < end; first += per_block) {
    const size_t length = std::min(per_block, end - first);
    for (int q = 0; q < n; ++q) block_inputs[static_cast<size_t>(q)] = inputs[static_cast<size_t>(q)] + first * element;
    uint8_t* const result = direct ? call.recv + first * element : staging;
    shm_reduce_in_order(result, block_inputs, n, length, args);
    for (int q = 0; q < n; ++q) {
      uint8_t* const to = outputs[static_cast<size_t>(q)] + first * element;
      if (to != result) std::memcpy(to, result, length * element);
    }
  }
  RCC_RETURN_IF_ERROR(segment.step("allreduce"));
  *done = true;
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
