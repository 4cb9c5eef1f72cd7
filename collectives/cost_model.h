// The alpha-beta cost model the algorithms' cost functions share: a message step costs kAlpha plus
// its bytes over kBandwidth; reducing costs bytes over kReduceRate. Rough values for a 100 Gb/s
// RDMA link or shared memory; only ratios matter (they decide which algorithm wins).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "collectives/collective.h"

namespace rcc::collectives::cost {

constexpr double kAlpha = 3e-6;       // seconds per message step
constexpr double kBandwidth = 10e9;   // bytes per second per link
constexpr double kReduceRate = 20e9;  // bytes per second through the reduce kernels

inline double log2_ceil(int ranks) { return ranks <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(ranks))); }
inline double segments_of(double bytes) { return std::max(1.0, std::ceil(bytes / static_cast<double>(kSegmentBytes))); }

// A chain pipelined over S segments: (steps + S - 1) segment times.
inline double pipelined_chain(double steps, double bytes) {
  const double segments = segments_of(bytes);
  return (steps + segments - 1) * (kAlpha + bytes / segments / kBandwidth);
}

// A binomial tree pipelined over S segments: the pipeline is lg + S - 1 steps deep, but the root
// sends (or receives) every byte lg times, which bounds the bandwidth term.
inline double pipelined_binomial(double lg, double bytes) {
  return (lg + segments_of(bytes) - 1) * kAlpha + lg * bytes / kBandwidth;
}

// P - 1 steps of `bytes` each (rings of allgather and reduce_scatter, pairwise and linear).
inline double linear_steps(size_t bytes, int ranks) {
  return (ranks - 1) * (kAlpha + static_cast<double>(bytes) / kBandwidth);
}

}  // namespace rcc::collectives::cost
