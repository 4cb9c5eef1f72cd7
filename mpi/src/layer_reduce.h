// Reductions the layer runs itself (MINLOC/MAXLOC, the program's own operations), and the entry
// every reducing collective goes through.
#pragma once

#include <vector>

#include "internal.h"

namespace rcc_mpi {

enum class Reduction { kReduce, kAllreduce, kScan, kExscan, kReduceScatter, kReduceScatterBlock };

// out_counts: reduce_scatter's per-rank counts (empty otherwise); count: the others' count.
int reduction(Reduction kind, const void* sendbuf, void* recvbuf, const std::vector<int>& out_counts, int count,
              MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request, const char* function);

// The same over the communicator's shadow with point-to-point messages, calling the operation on
// whole buffers in rank order (non-commutative operations get ranks 0..n-1 in order). input is
// the send buffer, or recvbuf when in place.
int layer_reduction(Reduction kind, const void* input, void* recvbuf, const std::vector<int>& out_counts, int count,
                    MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request, const char* function);

}  // namespace rcc_mpi
