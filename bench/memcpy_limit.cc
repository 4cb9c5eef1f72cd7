#include "memcpy_limit.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace rccbench {

double MemcpyLimit::copy_rate(size_t bytes, bool together, rcc_status_t* status) {
  if (from_.size() < bytes) {
    from_.assign(bytes, 1);
    to_.assign(bytes, 0);
  }
  double best = 0;
  for (int round = 0; round < 4; ++round) {
    if (together) {
      *status = sync_ranks(world_);
      if (*status != RCC_SUCCESS) return 0;
    }
    const auto begin = std::chrono::steady_clock::now();
    std::memcpy(to_.data(), from_.data(), bytes);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (round > 0 && (best == 0 || seconds < best)) best = seconds;  // round 0 warms up
  }
  return best > 0 ? static_cast<double>(bytes) / best / 1e9 : 0;
}

rcc_status_t MemcpyLimit::everyone(size_t bytes, double* rate) {
  rcc_status_t status = RCC_SUCCESS;
  const double mine = copy_rate(bytes, true, &status);
  if (status != RCC_SUCCESS) return status;
  std::vector<double> all(world_.rank == 0 ? world_.ranks : 1);
  status = gather_to_root(world_, &mine, sizeof mine, all.data());
  if (status != RCC_SUCCESS) return status;
  *rate = world_.rank == 0 ? *std::min_element(all.begin(), all.end()) : 0;
  return RCC_SUCCESS;
}

}  // namespace rccbench
