// rcc_send, rcc_recv, rcc_isend, rcc_irecv, rcc_test, rcc_wait.
#include "api/validate.h"
#include "core/comm.h"

using rcc::Status;

namespace {

Status check_p2p(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                 const char* function, size_t* bytes) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, function));
  RCC_RETURN_IF_ERROR(rcc::api::check_buffer(buf, count, datatype, function, "buf", bytes));
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, peer, function, "peer"));
  return rcc::api::check_tag(tag, function);
}

rcc_request* wrap(rcc_comm* comm, rcc::p2p::Request* request) {
  rcc_request* wrapped = rcc::acquire_request();
  wrapped->comm = comm;
  wrapped->p2p = request;
  return wrapped;
}

}  // namespace

extern "C" rcc_status_t rcc_isend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                  int tag, rcc_request_t* request) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_p2p(comm, buf, count, datatype, peer, tag, "rcc_isend", &bytes));
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_isend: request is NULL");
  rcc::p2p::Request* pending = nullptr;
  RCC_RETURN_IF_ERROR(comm->engine->isend(buf, bytes, peer, tag, rcc::p2p::kUserContext, &pending));
  *request = wrap(comm, pending);
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_irecv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                                  rcc_request_t* request) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_p2p(comm, buf, count, datatype, peer, tag, "rcc_irecv", &bytes));
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_irecv: request is NULL");
  rcc::p2p::Request* pending = nullptr;
  RCC_RETURN_IF_ERROR(comm->engine->irecv(buf, bytes, peer, tag, rcc::p2p::kUserContext, &pending));
  *request = wrap(comm, pending);
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_send(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                 int tag) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_p2p(comm, buf, count, datatype, peer, tag, "rcc_send", &bytes));
  return comm->engine->send(buf, bytes, peer, tag, rcc::p2p::kUserContext);
}

extern "C" rcc_status_t rcc_recv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                 int tag) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_p2p(comm, buf, count, datatype, peer, tag, "rcc_recv", &bytes));
  return comm->engine->recv(buf, bytes, peer, tag, rcc::p2p::kUserContext);
}

extern "C" rcc_status_t rcc_test(rcc_request_t request, int* done) {
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_test: request is NULL");
  if (done == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_test: done is NULL");
  if (!rcc::is_live_request(request)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "rcc_test: request is not pending (already completed or freed)");
  }
  bool finished = true;  // a send that completed when posted
  if (request->p2p != nullptr) {
    RCC_RETURN_IF_ERROR(request->comm->engine->test(request->p2p, &finished));
  } else if (request->collective != nullptr) {
    finished = request->comm->executor->is_done(request->collective);
  }
  if (!finished) {
    *done = 0;
    return RCC_SUCCESS;
  }
  *done = 1;
  return rcc_wait(request);
}

extern "C" rcc_status_t rcc_wait(rcc_request_t request) {
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_wait: request is NULL");
  if (!rcc::claim_request(request)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "rcc_wait: request is not pending (already completed or freed)");
  }
  Status status = RCC_SUCCESS;  // a send that completed when posted
  if (request->p2p != nullptr) {
    status = request->comm->engine->wait(request->p2p);
  } else if (request->collective != nullptr) {
    status = request->comm->executor->wait(request->collective);
  }
  rcc::recycle_request(request);
  return status;
}
