// Where the blocks of a collective's buffer are, in bytes, as rcc's vector collectives take them:
// straight in the program's buffer (a type whose elements adjoin) or packed into scratch.
#pragma once

#include <vector>

#include "internal.h"

namespace rcc_mpi {

struct Layout {
  std::vector<size_t> counts, displs;  // bytes, one per rank
  size_t total = 0;                    // bytes of scratch a packed layout needs
};

// counts[i] elements of type at buffer + displs[i] * extent.
inline Layout direct_layout(const int* counts, const int* displs, const rcc_mpi_datatype* type, int n) {
  Layout layout;
  for (int i = 0; i < n; ++i) {
    layout.counts.push_back(static_cast<size_t>(counts[i]) * type->size);
    layout.displs.push_back(static_cast<size_t>(displs[i]) * static_cast<size_t>(type->extent));
  }
  return layout;
}

// The same blocks back to back in scratch.
inline Layout packed_layout(const int* counts, const rcc_mpi_datatype* type, int n) {
  Layout layout;
  for (int i = 0; i < n; ++i) {
    layout.counts.push_back(static_cast<size_t>(counts[i]) * type->size);
    layout.displs.push_back(layout.total);
    layout.total += layout.counts.back();
  }
  return layout;
}

inline void pack_blocks(const void* buffer, const int* counts, const int* displs, const rcc_mpi_datatype* type, int n,
                        const Layout& packed, char* scratch, int only = -1) {
  for (int i = 0; i < n; ++i) {
    if (only >= 0 && i != only) continue;
    pack(static_cast<const char*>(buffer) + static_cast<ptrdiff_t>(displs[i]) * type->extent,
         static_cast<size_t>(counts[i]), type, scratch + packed.displs[static_cast<size_t>(i)]);
  }
}

inline void unpack_blocks(const char* scratch, const Layout& packed, const int* displs, const rcc_mpi_datatype* type,
                          int n, void* buffer, int skip = -1) {
  for (int i = 0; i < n; ++i) {
    if (i == skip) continue;
    unpack(scratch + packed.displs[static_cast<size_t>(i)], packed.counts[static_cast<size_t>(i)], type,
           static_cast<char*>(buffer) + static_cast<ptrdiff_t>(displs[i]) * type->extent);
  }
}

// Uniform blocks: count elements per rank, block i at i * count.
struct Uniform {
  Uniform(int count, int n) : counts(static_cast<size_t>(n), count), displs(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) displs[static_cast<size_t>(i)] = i * count;
  }
  std::vector<int> counts, displs;
};

}  // namespace rcc_mpi
