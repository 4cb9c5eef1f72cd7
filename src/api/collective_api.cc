// The public collective functions: validate every argument (errors are returned at once, with a
// message naming the argument), then hand the collective to the communicator (comm/launch.h).
#include <limits>

#include "api/validate.h"
#include "comm/comm.h"
#include "comm/launch.h"

using rcc::Status;
using rcc::collectives::Args;
using rcc::collectives::Kind;

namespace {

// Bytes of count elements on each of `ranks` ranks, for buffers that hold every rank's block.
Status check_all_ranks_buffer(const void* buffer, size_t count, rcc_datatype_t datatype, int ranks,
                              const char* function, const char* name) {
  if (count > std::numeric_limits<size_t>::max() / static_cast<size_t>(ranks)) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: count %zu times %d ranks overflows (%s)", function, count, ranks,
                     name);
  }
  size_t bytes = 0;
  return rcc::api::check_buffer(buffer, count * static_cast<size_t>(ranks), datatype, function, name, &bytes);
}

using rcc::api::check_count_buffer;

using rcc::api::begin;

// ---- One validator per collective; nonblocking = the rcc_i* form (request must not be NULL) ----

Status allreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                 rcc_op_t op, rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, count, datatype, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, count, datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_op(op, datatype, function));
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kAllreduce,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = count,
                                     .datatype = datatype,
                                     .op = op},
                                request);
}

Status broadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root, rcc_request_t* request,
                 bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(buf, count, datatype, function, "buf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, root, function, "root"));
  return rcc::launch_collective(
      comm,
      Args{
          .kind = Kind::kBroadcast, .sendbuf = buf, .recvbuf = buf, .count = count, .datatype = datatype, .root = root},
      request);
}

Status reduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype, rcc_op_t op,
              int root, rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, count, datatype, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, root, function, "root"));
  // Only the root receives; other ranks may pass NULL.
  if (comm->rank == root) RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, count, datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_op(op, datatype, function));
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kReduce,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = count,
                                     .datatype = datatype,
                                     .op = op,
                                     .root = root},
                                request);
}

Status allgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount, rcc_datatype_t datatype,
                 rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, sendcount, datatype, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(check_all_ranks_buffer(recvbuf, sendcount, datatype, comm->size, function, "recvbuf"));
  return rcc::launch_collective(
      comm,
      Args{.kind = Kind::kAllgather, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = sendcount, .datatype = datatype},
      request);
}

Status reduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount, rcc_datatype_t datatype,
                      rcc_op_t op, rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_all_ranks_buffer(sendbuf, recvcount, datatype, comm->size, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, recvcount, datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_op(op, datatype, function));
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kReduceScatter,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = recvcount,
                                     .datatype = datatype,
                                     .op = op},
                                request);
}

Status alltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_all_ranks_buffer(sendbuf, count, datatype, comm->size, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(check_all_ranks_buffer(recvbuf, count, datatype, comm->size, function, "recvbuf"));
  return rcc::launch_collective(
      comm, Args{.kind = Kind::kAlltoall, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .datatype = datatype},
      request);
}

Status gather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount, rcc_datatype_t datatype, int root,
              rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(sendbuf, sendcount, datatype, function, "sendbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, root, function, "root"));
  if (comm->rank == root) {
    RCC_RETURN_IF_ERROR(check_all_ranks_buffer(recvbuf, sendcount, datatype, comm->size, function, "recvbuf"));
  }
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kGather,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = sendcount,
                                     .datatype = datatype,
                                     .root = root},
                                request);
}

Status scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount, rcc_datatype_t datatype, int root,
               rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  RCC_RETURN_IF_ERROR(check_count_buffer(recvbuf, recvcount, datatype, function, "recvbuf"));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, root, function, "root"));
  if (comm->rank == root) {
    RCC_RETURN_IF_ERROR(check_all_ranks_buffer(sendbuf, recvcount, datatype, comm->size, function, "sendbuf"));
  }
  return rcc::launch_collective(comm,
                                Args{.kind = Kind::kScatter,
                                     .sendbuf = sendbuf,
                                     .recvbuf = recvbuf,
                                     .count = recvcount,
                                     .datatype = datatype,
                                     .root = root},
                                request);
}

Status barrier(rcc_comm_t comm, rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(begin(comm, request, nonblocking, function));
  return rcc::launch_collective(comm, Args{.kind = Kind::kBarrier}, request);
}

}  // namespace

extern "C" {

rcc_status_t rcc_allreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                           rcc_op_t op) {
  return allreduce(comm, sendbuf, recvbuf, count, datatype, op, nullptr, false, "rcc_allreduce");
}
rcc_status_t rcc_iallreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                            rcc_op_t op, rcc_request_t* request) {
  return allreduce(comm, sendbuf, recvbuf, count, datatype, op, request, true, "rcc_iallreduce");
}
rcc_status_t rcc_broadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root) {
  return broadcast(comm, buf, count, datatype, root, nullptr, false, "rcc_broadcast");
}
rcc_status_t rcc_ibroadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root,
                            rcc_request_t* request) {
  return broadcast(comm, buf, count, datatype, root, request, true, "rcc_ibroadcast");
}
rcc_status_t rcc_reduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                        rcc_op_t op, int root) {
  return reduce(comm, sendbuf, recvbuf, count, datatype, op, root, nullptr, false, "rcc_reduce");
}
rcc_status_t rcc_ireduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                         rcc_op_t op, int root, rcc_request_t* request) {
  return reduce(comm, sendbuf, recvbuf, count, datatype, op, root, request, true, "rcc_ireduce");
}
rcc_status_t rcc_allgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                           rcc_datatype_t datatype) {
  return allgather(comm, sendbuf, recvbuf, sendcount, datatype, nullptr, false, "rcc_allgather");
}
rcc_status_t rcc_iallgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                            rcc_datatype_t datatype, rcc_request_t* request) {
  return allgather(comm, sendbuf, recvbuf, sendcount, datatype, request, true, "rcc_iallgather");
}
rcc_status_t rcc_reduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                                rcc_datatype_t datatype, rcc_op_t op) {
  return reduce_scatter(comm, sendbuf, recvbuf, recvcount, datatype, op, nullptr, false, "rcc_reduce_scatter");
}
rcc_status_t rcc_ireduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                                 rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request) {
  return reduce_scatter(comm, sendbuf, recvbuf, recvcount, datatype, op, request, true, "rcc_ireduce_scatter");
}
rcc_status_t rcc_alltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype) {
  return alltoall(comm, sendbuf, recvbuf, count, datatype, nullptr, false, "rcc_alltoall");
}
rcc_status_t rcc_ialltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                           rcc_request_t* request) {
  return alltoall(comm, sendbuf, recvbuf, count, datatype, request, true, "rcc_ialltoall");
}
rcc_status_t rcc_gather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount, rcc_datatype_t datatype,
                        int root) {
  return gather(comm, sendbuf, recvbuf, sendcount, datatype, root, nullptr, false, "rcc_gather");
}
rcc_status_t rcc_igather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount, rcc_datatype_t datatype,
                         int root, rcc_request_t* request) {
  return gather(comm, sendbuf, recvbuf, sendcount, datatype, root, request, true, "rcc_igather");
}
rcc_status_t rcc_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount, rcc_datatype_t datatype,
                         int root) {
  return scatter(comm, sendbuf, recvbuf, recvcount, datatype, root, nullptr, false, "rcc_scatter");
}
rcc_status_t rcc_iscatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                          rcc_datatype_t datatype, int root, rcc_request_t* request) {
  return scatter(comm, sendbuf, recvbuf, recvcount, datatype, root, request, true, "rcc_iscatter");
}
rcc_status_t rcc_barrier(rcc_comm_t comm) { return barrier(comm, nullptr, false, "rcc_barrier"); }
rcc_status_t rcc_ibarrier(rcc_comm_t comm, rcc_request_t* request) {
  return barrier(comm, request, true, "rcc_ibarrier");
}

}  // extern "C"
