// The vector collectives (counts and displacements per rank) and the scans: validate every
// argument, then hand the collective to the communicator (comm/launch.h). The count and
// displacement arrays of an rcc_i* form must stay as they are until it completes (as in MPI).
#include <numeric>

#include "api/validate.h"
#include "comm/comm.h"
#include "comm/launch.h"

using rcc::Status;
using rcc::api::begin;
using rcc::api::check_blocks;
using rcc::api::check_count_buffer;
using rcc::collectives::Args;
using rcc::collectives::Kind;

namespace {

// Blocks of counts/displs for every rank, and the buffer holding them (extent elements).
Status check_displaced(const void* buffer, const size_t* counts, const size_t* displs, rcc_comm_t comm,
                       rcc_datatype_t datatype, const char* function, const char* buffer_name, const char* counts_name,
                       const char* displs_name, size_t* total) {
  size_t extent = 0;
  RCC_RETURN_IF_ERROR(check_blocks(counts, displs, comm->size, datatype, function, counts_name, displs_name, &extent));
  RCC_RETURN_IF_ERROR(check_count_buffer(buffer, extent, datatype, function, buffer_name));
  *total = std::accumulate(counts, counts + comm->size, size_t{0});
  return RCC_SUCCESS;
}

Status allgatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf, const size_t* recvcounts,
                  const size_t* displs, rcc_datatype_t datatype, rcc_request_t* request, bool nonblocking,
                  const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, sendcount, datatype, function, "sendbuf"));
  size_t total = 0;
  RCC_RETURN_IF_ERROR(check_displaced(recvbuf, recvcounts, displs, comm, datatype, function, "recvbuf", "recvcounts",
                                      "displs", &total));
  if (recvcounts[comm->rank] != sendcount) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: sendcount %zu differs from recvcounts[%d] = %zu", function,
                     sendcount, comm->rank, recvcounts[comm->rank]);
  }
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kAllgatherv,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = total,
                                     .datatype = datatype,
                                     .recvcounts = recvcounts,
                                     .rdispls = displs},
                                request);
}

Status alltoallv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                 const size_t* recvcounts, const size_t* rdispls, rcc_datatype_t datatype, rcc_request_t* request,
                 bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  size_t sent = 0, received = 0;
  RCC_RETURN_IF_ERROR(check_displaced(sendbuf, sendcounts, sdispls, comm, datatype, function, "sendbuf", "sendcounts",
                                      "sdispls", &sent));
  RCC_RETURN_IF_ERROR(check_displaced(recvbuf, recvcounts, rdispls, comm, datatype, function, "recvbuf", "recvcounts",
                                      "rdispls", &received));
  if (sendbuf == recvbuf && sent + received > 0) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: sendbuf and recvbuf are the same buffer (not in place)", function);
  }
  if (sendcounts[comm->rank] != recvcounts[comm->rank]) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: sendcounts[%d] = %zu differs from recvcounts[%d] = %zu", function,
                     comm->rank, sendcounts[comm->rank], comm->rank, recvcounts[comm->rank]);
  }
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kAlltoallv,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = sent + received,
                                     .datatype = datatype,
                                     .sendcounts = sendcounts,
                                     .sdispls = sdispls,
                                     .recvcounts = recvcounts,
                                     .rdispls = rdispls},
                                request);
}

Status gatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf, const size_t* recvcounts,
               const size_t* displs, rcc_datatype_t datatype, int root, rcc_request_t* request, bool nonblocking,
               const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, sendcount, datatype, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, root, function, "root"));
  size_t total = sendcount;
  if (comm->rank == root) {  // only the root's counts, displacements and receive buffer matter
    RCC_RETURN_IF_ERROR(check_displaced(recvbuf, recvcounts, displs, comm, datatype, function, "recvbuf", "recvcounts",
                                        "displs", &total));
    if (recvcounts[root] != sendcount) {
      return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: sendcount %zu differs from recvcounts[%d] = %zu", function,
                       sendcount, root, recvcounts[root]);
    }
  }
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kGatherv,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = comm->rank == root ? total : sendcount,
                                     .datatype = datatype,
                                     .root = root,
                                     .recvcounts = recvcounts,
                                     .rdispls = displs},
                                request);
}

Status scatterv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* displs, void* recvbuf,
                size_t recvcount, rcc_datatype_t datatype, int root, rcc_request_t* request, bool nonblocking,
                const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, recvcount, datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, root, function, "root"));
  size_t total = recvcount;
  if (comm->rank == root) {
    RCC_RETURN_IF_ERROR(check_displaced(sendbuf, sendcounts, displs, comm, datatype, function, "sendbuf", "sendcounts",
                                        "displs", &total));
    if (sendcounts[root] != recvcount) {
      return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: recvcount %zu differs from sendcounts[%d] = %zu", function,
                       recvcount, root, sendcounts[root]);
    }
  }
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kScatterv,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = comm->rank == root ? total : recvcount,
                                     .datatype = datatype,
                                     .root = root,
                                     .sendcounts = sendcounts,
                                     .sdispls = displs},
                                request);
}

Status reduce_scatterv(rcc_comm_t comm, const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                       rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request, bool nonblocking,
                       const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  if (recvcounts == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: recvcounts is NULL", function);
  RCC_RETURN_IF_ERROR(rcc::api::check_datatype(datatype, function));
  size_t total = 0;
  for (int r = 0; r < comm->size; ++r) {
    if (__builtin_add_overflow(total, recvcounts[r], &total)) {
      return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: the sum of recvcounts overflows at recvcounts[%d] = %zu",
                       function, r, recvcounts[r]);
    }
  }
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, total, datatype, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, recvcounts[comm->rank], datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_op(op, datatype, function));
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kReduceScatterv,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = total,
                                     .datatype = datatype,
                                     .op = op,
                                     .recvcounts = recvcounts},
                                request);
}

Status scan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype, rcc_op_t op,
            bool inclusive, rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, count, datatype, function, "sendbuf"));
  // Exscan leaves rank 0's receive buffer alone: it may be NULL there.
  if (inclusive || comm->rank != 0)
    RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, count, datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_op(op, datatype, function));
  return rcc::launch_collective(comm,
                                Args{.kind = inclusive ? Kind::kScan : Kind::kExscan,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = count,
                                     .datatype = datatype,
                                     .op = op},
                                request);
}

}  // namespace

extern "C" {

rcc_status_t rcc_allgatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                            const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype) {
  return allgatherv(comm, sendbuf, sendcount, recvbuf, recvcounts, displs, datatype, nullptr, false, "rcc_allgatherv");
}
rcc_status_t rcc_iallgatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                             const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype,
                             rcc_request_t* request) {
  return allgatherv(comm, sendbuf, sendcount, recvbuf, recvcounts, displs, datatype, request, true, "rcc_iallgatherv");
}
rcc_status_t rcc_alltoallv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                           void* recvbuf, const size_t* recvcounts, const size_t* rdispls, rcc_datatype_t datatype) {
  return alltoallv(comm, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, datatype, nullptr, false,
                   "rcc_alltoallv");
}
rcc_status_t rcc_ialltoallv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                            void* recvbuf, const size_t* recvcounts, const size_t* rdispls, rcc_datatype_t datatype,
                            rcc_request_t* request) {
  return alltoallv(comm, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, datatype, request, true,
                   "rcc_ialltoallv");
}
rcc_status_t rcc_gatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                         const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype, int root) {
  return gatherv(comm, sendbuf, sendcount, recvbuf, recvcounts, displs, datatype, root, nullptr, false, "rcc_gatherv");
}
rcc_status_t rcc_igatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                          const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype, int root,
                          rcc_request_t* request) {
  return gatherv(comm, sendbuf, sendcount, recvbuf, recvcounts, displs, datatype, root, request, true, "rcc_igatherv");
}
rcc_status_t rcc_scatterv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* displs,
                          void* recvbuf, size_t recvcount, rcc_datatype_t datatype, int root) {
  return scatterv(comm, sendbuf, sendcounts, displs, recvbuf, recvcount, datatype, root, nullptr, false,
                  "rcc_scatterv");
}
rcc_status_t rcc_iscatterv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* displs,
                           void* recvbuf, size_t recvcount, rcc_datatype_t datatype, int root, rcc_request_t* request) {
  return scatterv(comm, sendbuf, sendcounts, displs, recvbuf, recvcount, datatype, root, request, true,
                  "rcc_iscatterv");
}
rcc_status_t rcc_reduce_scatterv(rcc_comm_t comm, const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                 rcc_datatype_t datatype, rcc_op_t op) {
  return reduce_scatterv(comm, sendbuf, recvbuf, recvcounts, datatype, op, nullptr, false, "rcc_reduce_scatterv");
}
rcc_status_t rcc_ireduce_scatterv(rcc_comm_t comm, const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                  rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request) {
  return reduce_scatterv(comm, sendbuf, recvbuf, recvcounts, datatype, op, request, true, "rcc_ireduce_scatterv");
}
rcc_status_t rcc_scan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                      rcc_op_t op) {
  return scan(comm, sendbuf, recvbuf, count, datatype, op, true, nullptr, false, "rcc_scan");
}
rcc_status_t rcc_iscan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                       rcc_op_t op, rcc_request_t* request) {
  return scan(comm, sendbuf, recvbuf, count, datatype, op, true, request, true, "rcc_iscan");
}
rcc_status_t rcc_exscan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                        rcc_op_t op) {
  return scan(comm, sendbuf, recvbuf, count, datatype, op, false, nullptr, false, "rcc_exscan");
}
rcc_status_t rcc_iexscan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                         rcc_op_t op, rcc_request_t* request) {
  return scan(comm, sendbuf, recvbuf, count, datatype, op, false, request, true, "rcc_iexscan");
}

}  // extern "C"
