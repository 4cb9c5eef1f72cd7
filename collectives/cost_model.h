// The alpha-beta cost model the algorithms' cost functions share: a message step costs alpha()
// plus its bytes over bandwidth(); reducing costs bytes over kReduceRate. The defaults are rough
// values for a 100 Gb/s RDMA link; RCC_TUNER_NET_* set the network's and RCC_TUNER_SHM_* a host's
// shared memory (the two levels of a communicator that spans hosts). Only ratios matter (they
// decide which algorithm wins).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "collectives/collective.h"

namespace rcc::collectives::cost {

struct Rates {
  double alpha = 3e-6;          // seconds per message step between hosts
  double bandwidth = 10e9;      // bytes per second per network link
  double shm_alpha = 0.5e-6;    // seconds per shared-memory step (a cache line or two)
  double shm_bandwidth = 20e9;  // bytes per second a rank copies through shared memory
};
// The settings, read once (a bad value is logged and the default kept: choosing an algorithm
// cannot fail).
const Rates& rates();
inline double alpha() { return rates().alpha; }
inline double bandwidth() { return rates().bandwidth; }
constexpr double kReduceRate = 20e9;  // bytes per second through the reduce kernels

inline double log2_ceil(int ranks) { return ranks <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(ranks))); }
inline double segments_of(double bytes) { return std::max(1.0, std::ceil(bytes / static_cast<double>(kSegmentBytes))); }

// A chain pipelined over S segments: (steps + S - 1) segment times.
inline double pipelined_chain(double steps, double bytes) {
  const double segments = segments_of(bytes);
  return (steps + segments - 1) * (alpha() + bytes / segments / bandwidth());
}

// A binomial tree pipelined over S segments: the pipeline is lg + S - 1 steps deep, but the root
// sends (or receives) every byte lg times, which bounds the bandwidth term.
inline double pipelined_binomial(double lg, double bytes) {
  return (lg + segments_of(bytes) - 1) * alpha() + lg * bytes / bandwidth();
}

// P - 1 steps of `bytes` each (rings of allgather and reduce_scatter, pairwise and linear).
inline double linear_steps(size_t bytes, int ranks) {
  return (ranks - 1) * (alpha() + static_cast<double>(bytes) / bandwidth());
}

}  // namespace rcc::collectives::cost
