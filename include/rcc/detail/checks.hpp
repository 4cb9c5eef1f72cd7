// rcc.hpp's argument checks: buffer sizes the C call implies, checked before it is made. Each
// throws rcc::Error with RCC_ERR_INVALID_ARGUMENT and a message naming the function and the
// argument that does not fit. Included by rcc/rcc.hpp; not meant to be included on its own.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "rcc/detail/error.hpp"
#include "rcc/rcc.h"

namespace rcc::detail {

// The checks of one call (function) on a communicator of this rank and size (empty: no comm).
class Checker {
 public:
  using Counts = std::span<const std::size_t>;

  Checker(const char* function, bool empty, int rank, int size) noexcept
      : function_(function), empty_(empty), rank_(rank), size_(size) {}

  // name has `expected` elements (rule says why).
  void equal(std::string_view name, std::size_t actual, std::size_t expected, std::string_view rule) const {
    if (actual != expected) {
      fail(std::string(name) + " has " + std::to_string(actual) + " elements, expected " + std::to_string(expected) +
           " (" + std::string(rule) + ")");
    }
  }
  // name has per_rank elements for each rank.
  void times_size(std::string_view name, std::size_t actual, std::size_t per_rank, std::string_view rule) const {
    equal(name, actual, per_rank * ranks(), rule);
  }
  // in and out are equal, of size() equal blocks; returns the count of one block.
  std::size_t blocks(std::size_t in, std::size_t out) const {
    equal("out", out, in, "in.size()");
    if (in % ranks() != 0) {
      fail("in has " + std::to_string(in) + " elements, not a multiple of size() = " + std::to_string(size_));
    }
    return in / ranks();
  }
  // counts and displs have an entry per rank, and every block lies inside buffer (capacity elements).
  void placed(std::string_view buffer, std::size_t capacity, Counts counts, std::string_view counts_name, Counts displs,
              std::string_view displs_name) const {
    equal(counts_name, counts.size(), ranks(), "one per rank: size()");
    equal(displs_name, displs.size(), ranks(), "one per rank: size()");
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] <= capacity && displs[r] <= capacity - counts[r]) continue;
      const std::string at = "[" + std::to_string(r) + "] = ";
      fail(std::string(buffer) + " has " + std::to_string(capacity) + " elements, too few for " +
           std::string(counts_name) + at + std::to_string(counts[r]) + " at " + std::string(displs_name) + at +
           std::to_string(displs[r]));
    }
  }
  // This rank's block (own elements of buffer mine) among every rank's, placed in buffer all.
  void vector(std::string_view mine, std::size_t own, std::string_view all, std::size_t capacity,
              std::string_view counts_name, Counts counts, Counts displs) const {
    placed(all, capacity, counts, counts_name, displs, "displs");
    equal(mine, own, counts[static_cast<std::size_t>(rank_)], own_count(counts_name));
  }
  void alltoallv(std::size_t in, Counts sendcounts, Counts sdispls, std::size_t out, Counts recvcounts,
                 Counts rdispls) const {
    placed("in", in, sendcounts, "sendcounts", sdispls, "sdispls");
    placed("out", out, recvcounts, "recvcounts", rdispls, "rdispls");
  }
  // in holds every rank's block, one after the other; out this rank's.
  void reduce_scatterv(std::size_t in, std::size_t out, Counts recvcounts) const {
    equal("recvcounts", recvcounts.size(), ranks(), "one per rank: size()");
    std::size_t total = 0;
    for (std::size_t count : recvcounts) total += count;
    equal("in", in, total, "the sum of recvcounts");
    equal("out", out, recvcounts[static_cast<std::size_t>(rank_)], own_count("recvcounts"));
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    invalid_argument(std::string("rcc::Communicator::") + function_, message);
  }
  // size(), for a check that needs it: on an empty communicator the call fails first.
  std::size_t ranks() const {
    if (empty_) fail("the communicator is empty");
    return static_cast<std::size_t>(size_);
  }
  std::string own_count(std::string_view counts_name) const {
    return std::string(counts_name) + "[" + std::to_string(rank_) + "]";
  }

  const char* function_;
  bool empty_;
  int rank_;
  int size_;
};

}  // namespace rcc::detail
