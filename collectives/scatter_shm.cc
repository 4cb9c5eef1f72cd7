// Scatter through shared memory: per round the root copies a piece of every block into its slot
// and publishes; each other rank waits for the root only and copies its piece out. Cost: ceil(P*n / slot) steps; the
// root copies P*n bytes.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/registry.h"
#include "collectives/shm_pieces.h"

namespace rcc::collectives {

namespace {

Status scatter_shm(Context& ctx, const Args& args) {
  const ShmCall call(ctx, args);
  shm::Segment& segment = call.segment;
  const int rank = call.rank;
  const size_t block = args.count * call.element;
  const size_t piece = shm_piece_bytes(segment.slot_bytes(), call.ranks, call.element);
  const uint8_t* send = call.send;
  uint8_t* recv = call.recv;
  const bool root = rank == args.root;
  for (size_t base = 0; base < block; base += piece) {
    const size_t length = std::min(piece, block - base);
    const uint64_t step = segment.next_step();
    if (root) {
      RCC_RETURN_IF_ERROR(segment.begin("scatter"));
      stage_pieces(segment.slot(rank, step), send, call.ranks, block, piece, base, length, rank);
      segment.publish();
    } else {
      RCC_RETURN_IF_ERROR(segment.wait_for(args.root, "scatter"));
    }
    const uint8_t* from = root ? send + static_cast<size_t>(rank) * block + base
                               : segment.slot(args.root, step) + static_cast<size_t>(rank) * piece;
    if (recv + base != from) std::memcpy(recv + base, from, length);
    if (!root) segment.publish();
  }
  return RCC_SUCCESS;
}

}  // namespace

extern const AlgorithmRow kScatterShm;
const AlgorithmRow kScatterShm{Kind::kScatter, "shm", "", scatter_shm, nullptr, Needs::kSharedMemory};

}  // namespace rcc::collectives
