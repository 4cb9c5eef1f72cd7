// The block counts of the vector collectives under --imbalance F: rank r's count is
// base * (1 + F * (2r/(P-1) - 1)), so the counts fall on a line from base*(1-F) (rank 0) to
// base*(1+F) (rank P-1) and sum to P * base, the total of the non-vector collective. Rounded by
// cumulative sums (count r = round(S(r+1)) - round(S(r)), S(k) the exact sum of the first k), so
// each count is within 1 of the exact value and the total never moves. Integer arithmetic (F in
// steps of 1e-6) so that every rank, and the MPI harness built by another compiler, agree to the
// element. Header-only: mpi_bench.cc (built from one file by mpicxx) includes it too.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rccbench {

// F as millionths (0 <= F < 1).
inline uint64_t imbalance_millionths(double imbalance) { return static_cast<uint64_t>(std::llround(imbalance * 1e6)); }

// counts[r] for r = 0..ranks-1; displacements are their prefix sums (contiguous blocks).
inline std::vector<size_t> imbalanced_counts(size_t base, int ranks, double imbalance) {
  const size_t n = ranks > 0 ? static_cast<size_t>(ranks) : 0;
  std::vector<size_t> counts(n, base);
  const uint64_t f = imbalance_millionths(imbalance);
  if (n < 2 || f == 0) return counts;
  // S(k) = base*k - base*F*k*(P-k)/(P-1), rounded half up: the line's deficit below base*k.
  const unsigned __int128 denominator = static_cast<unsigned __int128>(1000000) * (n - 1);
  auto cumulative = [&](size_t k) -> unsigned __int128 {
    const unsigned __int128 deficit =
        static_cast<unsigned __int128>(base) * f * k * (n - k);  // < 2^41 * 2^20 * 2^62: fits
    return static_cast<unsigned __int128>(base) * k - (2 * deficit + denominator) / (2 * denominator);
  };
  unsigned __int128 previous = 0;
  for (size_t r = 0; r < n; ++r) {
    const unsigned __int128 next = r + 1 == n ? static_cast<unsigned __int128>(base) * n : cumulative(r + 1);
    counts[r] = static_cast<size_t>(next - previous);
    previous = next;
  }
  return counts;
}

// Prefix sums of counts: each block right after the previous one.
inline std::vector<size_t> contiguous_displacements(const std::vector<size_t>& counts) {
  std::vector<size_t> displs(counts.size());
  size_t at = 0;
  for (size_t r = 0; r < counts.size(); ++r) displs[r] = at, at += counts[r];
  return displs;
}

// An upper bound of every count for this base (buffers are sized once, for the largest base).
inline size_t max_imbalanced_count(size_t base, double imbalance) {
  return base +
         static_cast<size_t>((static_cast<unsigned __int128>(base) * imbalance_millionths(imbalance) + 999999) /
                             1000000) +
         1;
}

}  // namespace rccbench
