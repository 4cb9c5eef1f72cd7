// Allgather through shared memory: per chunk of one slot every rank copies its piece in, one step,
// and every rank copies all pieces out. Cost: ceil(n / slot) steps; each rank copies n in and P*n out.
#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"

namespace rcc::collectives {

Status allgather_shm(Context& ctx, const Args& args) {
  shm::Segment& segment = ctx.shm();
  const int n = segment.size(), rank = segment.rank();
  const size_t block = args.count * rcc_datatype_size(args.datatype);
  const auto* send = static_cast<const uint8_t*>(args.sendbuf);
  auto* recv = static_cast<uint8_t*>(args.recvbuf);
  for (size_t base = 0; base < block; base += segment.slot_bytes()) {
    const size_t length = std::min(segment.slot_bytes(), block - base);
    RCC_RETURN_IF_ERROR(segment.begin("allgather"));
    const uint64_t step = segment.next_step();
    std::memcpy(segment.slot(rank, step), send + base, length);
    RCC_RETURN_IF_ERROR(segment.step("allgather"));
    for (int p = 0; p < n; ++p) {
      uint8_t* to = recv + static_cast<size_t>(p) * block + base;
      const uint8_t* from = p == rank ? send + base : segment.slot(p, step);
      if (to != from) std::memcpy(to, from, length);  // equal: in place
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
