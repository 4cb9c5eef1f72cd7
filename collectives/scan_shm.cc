// Scan and exscan through shared memory: per chunk of one slot every rank copies its input in,
// takes one step, and reduces the slots of ranks 0..r (0..r-1 for exscan) in rank order into its
// result, its own input read in place where it can be. One step per chunk and no message, where
// the transport's recursive doubling (scan_recursive_doubling.cc) takes lg P message exchanges of
// the whole buffer, each a few microseconds on one host. Rank r >= 1 makes r kernel passes
// (exscan r - 1, a copy at rank 1) over r*n bytes other cores wrote: the last rank of P reads
// (P-1)*n, as in the one-step allreduce. Lower ranks first, as in the transport's algorithm but
// grouped left to right, so sums that are exact give the same bits either way, inexact ones may
// differ in the last bits between the two algorithms (never between runs of one).
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status scan_shm_common(Context& ctx, const Args& args, bool inclusive) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const int n = call.ranks, rank = call.rank;
  const size_t element = call.element, chunk = segment.slot_bytes() / element;
  const int contributors = inclusive ? rank + 1 : rank;
  // The kernel writes the result before it reads input q >= 2 (shm_reduce_in_order): in place,
  // this rank's input is then read from its slot copy, made before anything is written.
  const bool own_read_in_place = rank < 2 || args.sendbuf != args.recvbuf;
  // Every rank but the last has its input read by the ranks above it.
  const bool copy_in = rank < n - 1 || (inclusive && !own_read_in_place);
  const uint8_t** inputs = shm_input_list(n).data();
  for (size_t base = 0; base < args.count; base += chunk) {
    const size_t length = std::min(chunk, args.count - base);
    RCC_RETURN_IF_ERROR(segment.begin(kind_name(args.kind)));
    const uint64_t step = segment.next_step();
    if (copy_in) std::memcpy(segment.slot(rank, step), call.send + base * element, length * element);
    RCC_RETURN_IF_ERROR(segment.step(kind_name(args.kind)));
    if (contributors == 0) continue;  // exscan's rank 0: its recvbuf stays untouched (it may be NULL)
    for (int q = 0; q < contributors; ++q) {
      inputs[q] = q == rank && own_read_in_place ? call.send + base * element : segment.slot(q, step);
    }
    shm_reduce_in_order(call.recv + base * element, inputs, contributors, length, args);
  }
  return RCC_SUCCESS;
}

Status scan_shm(Context& ctx, const Args& args) { return scan_shm_common(ctx, args, true); }
Status exscan_shm(Context& ctx, const Args& args) { return scan_shm_common(ctx, args, false); }

}  // namespace

extern const AlgorithmRow kScanShm, kExscanShm;
const AlgorithmRow kScanShm{Kind::kScan, "shm", "", scan_shm, nullptr, Needs::kSharedMemory};
const AlgorithmRow kExscanShm{Kind::kExscan, "shm", "", exscan_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
