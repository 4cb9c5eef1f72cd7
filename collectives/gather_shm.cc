// Gather through shared memory: per chunk of one slot every other rank copies its piece in and
// publishes (without waiting), the root waits for them all and copies the pieces out. Cost: ceil(n / slot) steps; the root copies P*n bytes.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"

namespace rcc::collectives {

Status gather_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const int n = segment.size(), rank = segment.rank();
  const size_t block = args.count * rcc_datatype_size(args.datatype);
  const auto* send = static_cast<const uint8_t*>(args.sendbuf);
  auto* recv = static_cast<uint8_t*>(args.recvbuf);
  const bool root = rank == args.root;
  for (size_t base = 0; base < block; base += segment.slot_bytes()) {
    const size_t length = std::min(segment.slot_bytes(), block - base);
    const uint64_t step = segment.next_step();
    if (!root) {
      RCC_RETURN_IF_ERROR(segment.begin("gather"));
      std::memcpy(segment.slot(rank, step), send + base, length);
      segment.publish();
      continue;
    }
    RCC_RETURN_IF_ERROR(segment.wait_others_then_publish("gather"));
    for (int p = 0; p < n; ++p) {
      uint8_t* to = recv + static_cast<size_t>(p) * block + base;
      const uint8_t* from = p == rank ? send + base : segment.slot(p, step);
      if (to != from) std::memcpy(to, from, length);
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
