#include "exchange.h"

#include <cstring>

namespace rccbench {
namespace {
constexpr int kControlTag = 1000000;  // far from the tags the p2p modes use
}

rcc_status_t gather_to_root(const World& world, const void* mine, size_t bytes, void* all) {
  if (world.rank != 0) return rcc_send(world.comm, mine, bytes, RCC_UINT8, 0, kControlTag);
  auto* out = static_cast<unsigned char*>(all);
  std::memcpy(out, mine, bytes);
  for (int peer = 1; peer < world.ranks; ++peer) {
    rcc_status_t status = rcc_recv(world.comm, out + peer * bytes, bytes, RCC_UINT8, peer, kControlTag);
    if (status != RCC_SUCCESS) return status;
  }
  return RCC_SUCCESS;
}

rcc_status_t broadcast_from_root(const World& world, void* data, size_t bytes) {
  if (world.rank != 0) return rcc_recv(world.comm, data, bytes, RCC_UINT8, 0, kControlTag + 1);
  for (int peer = 1; peer < world.ranks; ++peer) {
    rcc_status_t status = rcc_send(world.comm, data, bytes, RCC_UINT8, peer, kControlTag + 1);
    if (status != RCC_SUCCESS) return status;
  }
  return RCC_SUCCESS;
}

rcc_status_t sync_ranks(const World& world) {
  unsigned char token = 1;
  unsigned char all[1];  // rank 0 receives one byte at a time below
  if (world.rank != 0) {
    rcc_status_t status = rcc_send(world.comm, &token, 1, RCC_UINT8, 0, kControlTag + 2);
    if (status != RCC_SUCCESS) return status;
  } else {
    for (int peer = 1; peer < world.ranks; ++peer) {
      rcc_status_t status = rcc_recv(world.comm, all, 1, RCC_UINT8, peer, kControlTag + 2);
      if (status != RCC_SUCCESS) return status;
    }
  }
  return broadcast_from_root(world, &token, 1);
}

}  // namespace rccbench
