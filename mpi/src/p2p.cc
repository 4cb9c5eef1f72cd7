// Point-to-point calls. A datatype whose elements adjoin goes to rcc as it is (bytes, zero copy
// for large messages); any other is packed into scratch first (sends) or received into scratch
// and unpacked (receives). MPI_PROC_NULL completes at once; synchronous sends use rcc's.
#include <cstring>

#include "internal.h"

namespace rcc_mpi {
namespace {

int source_of(int source) { return source == MPI_ANY_SOURCE ? RCC_ANY_SOURCE : source; }

void fill_status(MPI_Status* status, const rcc_msg_info_t& info) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = info.source;
  status->MPI_TAG = info.tag;
  status->MPI_ERROR = MPI_SUCCESS;
  status->rcc_cancelled = 0;
  status->rcc_bytes = info.bytes;
}

int check_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, const char* function) {
  if (int error = check_comm(comm, function)) return error;
  if (int error = check_buffer(comm, buf, count, type, function, "buf")) return error;
  if (int error = check_dest(comm, dest, function)) return error;
  return check_send_tag(comm, tag, function);
}

int check_recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, const char* function) {
  if (int error = check_comm(comm, function)) return error;
  if (int error = check_buffer(comm, buf, count, type, function, "buf")) return error;
  if (int error = check_source(comm, source, function)) return error;
  return check_recv_tag(comm, tag, function);
}

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, bool synchronous,
         MPI_Request* request, const char* function) {
  if (int error = check_send(buf, count, type, dest, tag, comm, function)) return error;
  if (request != nullptr) *request = nullptr;
  if (dest == MPI_PROC_NULL) {
    if (request != nullptr) *request = completed_request(comm, false);
    return MPI_SUCCESS;
  }
  const size_t bytes = static_cast<size_t>(count) * type->size;
  const void* data = data_start(buf, type);
  Scratch packed;
  if (!type->contiguous) {
    packed = scratch(bytes);
    pack(buf, static_cast<size_t>(count), type, packed->data());
    data = packed->data();
  }
  if (request == nullptr) {
    rcc_status_t status = synchronous ? rcc_ssend(comm->comm, data, bytes, RCC_UINT8, dest, tag)
                                      : rcc_send(comm->comm, data, bytes, RCC_UINT8, dest, tag);
    return status == RCC_SUCCESS ? MPI_SUCCESS : fail_rcc(comm, status, function);
  }
  rcc_request_t inner = nullptr;
  rcc_status_t status = synchronous ? rcc_issend(comm->comm, data, bytes, RCC_UINT8, dest, tag, &inner)
                                    : rcc_isend(comm->comm, data, bytes, RCC_UINT8, dest, tag, &inner);
  if (status != RCC_SUCCESS) return fail_rcc(comm, status, function);
  MPI_Request created = new_request(comm, rcc_mpi_request::Kind::kRcc);
  created->inner = inner;
  created->status.MPI_SOURCE = dest;
  created->status.MPI_TAG = tag;
  if (packed) created->finish = [packed](size_t, std::string*) { return MPI_SUCCESS; };  // keeps it until sent
  *request = created;
  return MPI_SUCCESS;
}

int receive(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status,
            MPI_Request* request, const char* function) {
  if (int error = check_recv(buf, count, type, source, tag, comm, function)) return error;
  if (source == MPI_PROC_NULL) {
    if (request != nullptr) {
      *request = completed_request(comm, true);
    } else {
      set_proc_null_status(status);
    }
    return MPI_SUCCESS;
  }
  const size_t capacity = static_cast<size_t>(count) * type->size;
  void* target = data_start(buf, type);
  Scratch packed;
  if (!type->contiguous) {
    packed = scratch(capacity);
    target = packed->data();
  }
  if (request == nullptr) {
    rcc_msg_info_t info{};
    rcc_status_t result = rcc_recv_info(comm->comm, target, capacity, RCC_UINT8, source_of(source), tag, &info);
    if (result != RCC_SUCCESS) return fail_rcc(comm, result, function);
    if (packed) unpack(packed->data(), info.bytes, type, buf);
    fill_status(status, info);
    return MPI_SUCCESS;
  }
  rcc_request_t inner = nullptr;
  rcc_status_t result = rcc_irecv(comm->comm, target, capacity, RCC_UINT8, source_of(source), tag, &inner);
  if (result != RCC_SUCCESS) return fail_rcc(comm, result, function);
  MPI_Request created = new_request(comm, rcc_mpi_request::Kind::kRcc);
  created->inner = inner;
  created->receive = true;
  if (packed) {
    TypeRef held = hold(type);
    created->finish = [packed, held, buf](size_t bytes, std::string*) {
      unpack(packed->data(), bytes, held.get(), buf);
      return MPI_SUCCESS;
    };
  }
  *request = created;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send(buf, count, datatype, dest, tag, comm, false, nullptr, "MPI_Send");
}

extern "C" int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send(buf, count, datatype, dest, tag, comm, true, nullptr, "MPI_Ssend");
}

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Isend")) return error;
  return send(buf, count, datatype, dest, tag, comm, false, request, "MPI_Isend");
}

extern "C" int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Issend")) return error;
  return send(buf, count, datatype, dest, tag, comm, true, request, "MPI_Issend");
}

extern "C" int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                        MPI_Status* status) {
  return receive(buf, count, datatype, source, tag, comm, status, nullptr, "MPI_Recv");
}

extern "C" int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Irecv")) return error;
  return receive(buf, count, datatype, source, tag, comm, MPI_STATUS_IGNORE, request, "MPI_Irecv");
}

extern "C" int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Status* status) {
  const char* function = "MPI_Sendrecv";
  if (int error = check_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, function)) return error;
  if (int error = check_recv(recvbuf, recvcount, recvtype, source, recvtag, comm, function)) return error;
  if (dest != MPI_PROC_NULL && source != MPI_PROC_NULL && sendtype->contiguous && recvtype->contiguous) {
    // rcc's own sendrecv takes one length per side in one datatype: bytes.
    const size_t send_bytes = static_cast<size_t>(sendcount) * sendtype->size;
    const size_t recv_bytes = static_cast<size_t>(recvcount) * recvtype->size;
    rcc_msg_info_t info{};
    rcc_request_t receive_request = nullptr;
    // rcc_sendrecv's two sides share a count; with different lengths post them separately.
    if (send_bytes == recv_bytes) {
      rcc_status_t result =
          rcc_sendrecv(comm->comm, data_start(sendbuf, sendtype), send_bytes, dest, sendtag,
                       data_start(recvbuf, recvtype), recv_bytes, source_of(source), recvtag, RCC_UINT8, &info);
      if (result != RCC_SUCCESS) return fail_rcc(comm, result, function);
      fill_status(status, info);
      return MPI_SUCCESS;
    }
    rcc_status_t result = rcc_irecv(comm->comm, data_start(recvbuf, recvtype), recv_bytes, RCC_UINT8, source_of(source),
                                    recvtag, &receive_request);
    if (result != RCC_SUCCESS) return fail_rcc(comm, result, function);
    rcc_status_t sent = rcc_send(comm->comm, data_start(sendbuf, sendtype), send_bytes, RCC_UINT8, dest, sendtag);
    if (sent != RCC_SUCCESS) {
      // The receive may never be matched now: taken off, then waited for, so nothing outlives the call.
      const std::string why = std::string(rcc_last_error()) + " [" + rcc_status_string(sent) + "]";
      rcc_cancel(receive_request, nullptr);
      rcc_wait_info(receive_request, &info);
      return fail(comm, error_class_of(sent), function, "%s", why.c_str());
    }
    rcc_status_t received = rcc_wait_info(receive_request, &info);
    if (received != RCC_SUCCESS) return fail_rcc(comm, received, function);
    fill_status(status, info);
    return MPI_SUCCESS;
  }
  MPI_Request requests[2];
  if (int error =
          receive(recvbuf, recvcount, recvtype, source, recvtag, comm, MPI_STATUS_IGNORE, &requests[0], function))
    return error;
  // A failed send leaves a receive that may never be matched: cancelled, then waited for.
  if (int error = send(sendbuf, sendcount, sendtype, dest, sendtag, comm, false, &requests[1], function)) {
    MPI_Cancel(&requests[0]);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    return error;
  }
  MPI_Status statuses[2];
  if (int error = MPI_Wait(&requests[1], &statuses[1])) {
    MPI_Cancel(&requests[0]);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    return error;
  }
  return MPI_Wait(&requests[0], status);
}

extern "C" int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                    int recvtag, MPI_Comm comm, MPI_Status* status) {
  const char* function = "MPI_Sendrecv_replace";
  if (int error = check_send(buf, count, datatype, dest, sendtag, comm, function)) return error;
  if (int error = check_source(comm, source, function)) return error;
  if (int error = check_recv_tag(comm, recvtag, function)) return error;
  // The outgoing data is packed aside first, so the receive may land in buf.
  std::vector<char> outgoing(static_cast<size_t>(count) * datatype->size);
  pack(buf, static_cast<size_t>(count), datatype, outgoing.data());
  return MPI_Sendrecv(outgoing.data(), static_cast<int>(outgoing.size()), MPI_BYTE, dest, sendtag, buf, count, datatype,
                      source, recvtag, comm, status);
}

extern "C" int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (int error = check_comm(comm, "MPI_Iprobe")) return error;
  if (int error = check_source(comm, source, "MPI_Iprobe")) return error;
  if (int error = check_recv_tag(comm, tag, "MPI_Iprobe")) return error;
  if (flag == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  int found = 0;
  rcc_msg_info_t info{};
  rcc_status_t result = rcc_iprobe(comm->comm, source_of(source), tag, &found, &info);
  if (result != RCC_SUCCESS) return fail_rcc(comm, result, "MPI_Iprobe");
  *flag = found;
  if (found) fill_status(status, info);
  return MPI_SUCCESS;
}

extern "C" int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (int error = check_comm(comm, "MPI_Probe")) return error;
  if (int error = check_source(comm, source, "MPI_Probe")) return error;
  if (int error = check_recv_tag(comm, tag, "MPI_Probe")) return error;
  if (source == MPI_PROC_NULL) {
    set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  rcc_msg_info_t info{};
  rcc_status_t result = rcc_probe(comm->comm, source_of(source), tag, &info);
  if (result != RCC_SUCCESS) return fail_rcc(comm, result, "MPI_Probe");
  fill_status(status, info);
  return MPI_SUCCESS;
}

extern "C" int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  if (int error = check_initialized("MPI_Get_count")) return error;
  if (status == nullptr || count == nullptr)
    return fail(nullptr, MPI_ERR_ARG, "MPI_Get_count", "status or count is NULL");
  if (datatype == nullptr || datatype->is_null) {
    return fail(nullptr, MPI_ERR_TYPE, "MPI_Get_count", "datatype is MPI_DATATYPE_NULL");
  }
  if (datatype->size == 0) {
    *count = 0;
  } else if (status->rcc_bytes % datatype->size != 0) {
    *count = MPI_UNDEFINED;  // not a whole number of elements
  } else {
    *count = static_cast<int>(status->rcc_bytes / datatype->size);
  }
  return MPI_SUCCESS;
}
