// Point-to-point calls: sends, receives (any source, any tag), probes, sendrecv, and waiting for
// and testing requests. Ranks are the communicator's; its group maps them to the job's.
#include <sched.h>

#include <chrono>
#include <thread>

#include "api/validate.h"
#include "comm/call_record.h"
#include "comm/comm.h"

using rcc::Status;

namespace {

using Clock = std::chrono::steady_clock;

// Waits that poll several requests or probe (no single request to sleep on) sleep this long once
// the wait policy says to sleep: a message is then found within it.
constexpr auto kPolledSleep = std::chrono::microseconds(100);

Status check_send(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                  const char* function, const char* peer_name, size_t* bytes) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, function));
  RCC_RETURN_IF_ERROR(rcc::api::check_buffer(buf, count, datatype, function, "buf", bytes));
  if (peer == RCC_ANY_SOURCE) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s is RCC_ANY_SOURCE, which only receives and probes take",
                     function, peer_name);
  }
  RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, peer, function, peer_name));
  return rcc::api::check_tag(tag, function);
}

// A receive's or probe's peer and tag: a rank or RCC_ANY_SOURCE, a tag >= 0 or RCC_ANY_TAG.
Status check_source(rcc_comm_t comm, int peer, int tag, const char* function, const char* peer_name) {
  if (peer != RCC_ANY_SOURCE) RCC_RETURN_IF_ERROR(rcc::api::check_rank(comm, peer, function, peer_name));
  if (tag == RCC_ANY_TAG) return RCC_SUCCESS;
  return rcc::api::check_tag(tag, function);
}

Status check_recv(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                  const char* function, size_t* bytes) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, function));
  RCC_RETURN_IF_ERROR(rcc::api::check_buffer(buf, count, datatype, function, "buf", bytes));
  return check_source(comm, peer, tag, function, "peer");
}

int engine_source(const rcc_comm* comm, int peer) {
  return peer == RCC_ANY_SOURCE ? rcc::p2p::kAnySource : comm->job_rank(peer);
}

// What the engine matched, in the communicator's ranks.
rcc_msg_info_t to_info(const rcc_comm* comm, const rcc::p2p::MessageInfo& matched) {
  return rcc_msg_info_t{matched.source >= 0 ? comm->group->rank_of(matched.source) : matched.source, matched.tag,
                        matched.bytes};
}

// The flight recorder's entry of a point-to-point call (peer and tag as the caller gave them).
uint64_t record(const rcc_comm* comm, int op, rcc_datatype_t datatype, size_t count, int peer, int tag) {
  return rcc::CallRecorder::instance().begin(comm->group->id(), 0, op, datatype, count, peer, tag);
}

Status recorded(uint64_t ticket, Status status) {
  rcc::CallRecorder::instance().end(ticket, status);
  return status;
}

rcc_request* wrap(rcc_comm* comm, rcc::p2p::Request* request) {
  rcc_request* wrapped = rcc::acquire_request();
  wrapped->comm = comm;
  wrapped->p2p = request;
  return wrapped;
}

// Polls until *done, as the wait policy says (spin, yield, then short sleeps), or until RCC_TIMEOUT
// passes without it.
template <class Poll>
Status poll_until(rcc_comm* comm, const char* function, Poll poll) {
  rcc::Backoff backoff(comm->job->wait);
  const auto start = Clock::now();
  for (;;) {
    bool done = false;
    RCC_RETURN_IF_ERROR(poll(&done));
    if (done) return RCC_SUCCESS;
    switch (backoff.idle()) {
      case rcc::Backoff::Next::kPoll: break;
      case rcc::Backoff::Next::kYield: sched_yield(); break;
      case rcc::Backoff::Next::kSleep:
        std::this_thread::sleep_for(kPolledSleep);
        if (std::chrono::duration<double>(Clock::now() - start).count() > comm->timeout_s) {
          return rcc::fail(RCC_ERR_TIMEOUT, "%s: nothing arrived for %.0f s (RCC_TIMEOUT)", function, comm->timeout_s);
        }
        break;
    }
  }
}

// Finishes a claimed request: waits for it, frees it, reports what it matched.
Status finish(rcc_request* request, rcc_msg_info_t* info) {
  Status status = RCC_SUCCESS;  // a send that completed when posted
  rcc_msg_info_t matched = request->send_info;
  if (request->p2p != nullptr) {
    rcc::p2p::MessageInfo engine_info;
    const bool receive = request->p2p->kind == rcc::p2p::Request::Kind::kRecv;
    status = request->comm->engine->wait(request->p2p, &engine_info);
    if (receive) matched = to_info(request->comm, engine_info);
  } else if (request->collective != nullptr) {
    status = request->comm->executor->wait(request->collective);
    matched = rcc_msg_info_t{};
  }
  rcc::CallRecorder::instance().end(request->record, status);
  rcc::recycle_request(request);
  if (status == RCC_SUCCESS && info != nullptr) *info = matched;
  return status;
}

// Whether a live request finished (progressing it once).
Status is_done(rcc_request* request, bool* done) {
  *done = true;  // a send that completed when posted
  if (request->p2p != nullptr) return request->comm->engine->test(request->p2p, done);
  if (request->collective != nullptr) *done = request->comm->executor->is_done(request->collective);
  return RCC_SUCCESS;
}

}  // namespace

extern "C" rcc_status_t rcc_isend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                  int tag, rcc_request_t* request) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_send(comm, buf, count, datatype, peer, tag, "rcc_isend", "peer", &bytes));
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_isend: request is NULL");
  rcc::p2p::Request* pending = nullptr;
  const uint64_t ticket = record(comm, rcc::kCallSend, datatype, count, peer, tag);
  RCC_RETURN_IF_ERROR(
      recorded(ticket, comm->engine->isend(buf, bytes, comm->job_rank(peer), tag, comm->user_context, &pending)));
  rcc_request* wrapped = wrap(comm, pending);
  wrapped->send_info = rcc_msg_info_t{peer, tag, bytes};
  wrapped->record = ticket;
  *request = wrapped;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_issend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                   int tag, rcc_request_t* request) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_send(comm, buf, count, datatype, peer, tag, "rcc_issend", "peer", &bytes));
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_issend: request is NULL");
  rcc::p2p::Request* pending = nullptr;
  const uint64_t ticket = record(comm, rcc::kCallSend, datatype, count, peer, tag);
  RCC_RETURN_IF_ERROR(
      recorded(ticket, comm->engine->isend(buf, bytes, comm->job_rank(peer), tag, comm->user_context, &pending, true)));
  rcc_request* wrapped = wrap(comm, pending);
  wrapped->send_info = rcc_msg_info_t{peer, tag, bytes};
  wrapped->record = ticket;
  *request = wrapped;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_ssend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                  int tag) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_send(comm, buf, count, datatype, peer, tag, "rcc_ssend", "peer", &bytes));
  const uint64_t ticket = record(comm, rcc::kCallSend, datatype, count, peer, tag);
  return recorded(ticket, comm->engine->send(buf, bytes, comm->job_rank(peer), tag, comm->user_context, true));
}

extern "C" rcc_status_t rcc_cancel(rcc_request_t request, int* cancelled) {
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_cancel: request is NULL");
  if (!rcc::is_live_request(request)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "rcc_cancel: request is not pending (already completed or freed)");
  }
  bool taken_off = false;
  if (request->p2p != nullptr) RCC_RETURN_IF_ERROR(request->comm->engine->cancel(request->p2p, &taken_off));
  if (cancelled != nullptr) *cancelled = taken_off ? 1 : 0;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_irecv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                                  rcc_request_t* request) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_recv(comm, buf, count, datatype, peer, tag, "rcc_irecv", &bytes));
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_irecv: request is NULL");
  rcc::p2p::Request* pending = nullptr;
  const uint64_t ticket = record(comm, rcc::kCallRecv, datatype, count, peer, tag);
  RCC_RETURN_IF_ERROR(
      recorded(ticket, comm->engine->irecv(buf, bytes, engine_source(comm, peer), tag, comm->user_context, &pending)));
  rcc_request* wrapped = wrap(comm, pending);
  wrapped->record = ticket;
  *request = wrapped;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_send(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                 int tag) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_send(comm, buf, count, datatype, peer, tag, "rcc_send", "peer", &bytes));
  const uint64_t ticket = record(comm, rcc::kCallSend, datatype, count, peer, tag);
  return recorded(ticket, comm->engine->send(buf, bytes, comm->job_rank(peer), tag, comm->user_context));
}

extern "C" rcc_status_t rcc_recv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_recv(comm, buf, count, datatype, peer, tag, "rcc_recv", &bytes));
  const uint64_t ticket = record(comm, rcc::kCallRecv, datatype, count, peer, tag);
  return recorded(ticket, comm->engine->recv(buf, bytes, engine_source(comm, peer), tag, comm->user_context));
}

extern "C" rcc_status_t rcc_recv_info(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer,
                                      int tag, rcc_msg_info_t* info) {
  size_t bytes = 0;
  RCC_RETURN_IF_ERROR(check_recv(comm, buf, count, datatype, peer, tag, "rcc_recv_info", &bytes));
  rcc::p2p::MessageInfo matched;
  const uint64_t ticket = record(comm, rcc::kCallRecv, datatype, count, peer, tag);
  RCC_RETURN_IF_ERROR(
      recorded(ticket, comm->engine->recv(buf, bytes, engine_source(comm, peer), tag, comm->user_context, &matched)));
  if (info != nullptr) *info = to_info(comm, matched);
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_iprobe(rcc_comm_t comm, int peer, int tag, int* found, rcc_msg_info_t* info) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_iprobe"));
  RCC_RETURN_IF_ERROR(check_source(comm, peer, tag, "rcc_iprobe", "peer"));
  if (found == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_iprobe: found is NULL");
  bool arrived = false;
  rcc::p2p::MessageInfo matched;
  RCC_RETURN_IF_ERROR(comm->engine->iprobe(engine_source(comm, peer), tag, comm->user_context, &arrived, &matched));
  if (arrived && info != nullptr) *info = to_info(comm, matched);
  *found = arrived ? 1 : 0;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_probe(rcc_comm_t comm, int peer, int tag, rcc_msg_info_t* info) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_probe"));
  RCC_RETURN_IF_ERROR(check_source(comm, peer, tag, "rcc_probe", "peer"));
  rcc::p2p::MessageInfo matched;
  RCC_RETURN_IF_ERROR(poll_until(comm, "rcc_probe", [&](bool* done) {
    return comm->engine->iprobe(engine_source(comm, peer), tag, comm->user_context, done, &matched);
  }));
  if (info != nullptr) *info = to_info(comm, matched);
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_sendrecv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, int dest, int sendtag,
                                     void* recvbuf, size_t recvcount, int source, int recvtag, rcc_datatype_t datatype,
                                     rcc_msg_info_t* info) {
  size_t send_bytes = 0, recv_bytes = 0;
  RCC_RETURN_IF_ERROR(
      check_send(comm, sendbuf, sendcount, datatype, dest, sendtag, "rcc_sendrecv", "dest", &send_bytes));
  RCC_RETURN_IF_ERROR(rcc::api::check_buffer(recvbuf, recvcount, datatype, "rcc_sendrecv", "recvbuf", &recv_bytes));
  RCC_RETURN_IF_ERROR(check_source(comm, source, recvtag, "rcc_sendrecv", "source"));
  rcc::p2p::Request* receive = nullptr;
  rcc::p2p::Request* send = nullptr;
  RCC_RETURN_IF_ERROR(
      comm->engine->irecv(recvbuf, recv_bytes, engine_source(comm, source), recvtag, comm->user_context, &receive));
  Status posted = comm->engine->isend(sendbuf, send_bytes, comm->job_rank(dest), sendtag, comm->user_context, &send);
  // Both are waited for whatever happens, so no request outlives the call.
  rcc::p2p::MessageInfo matched;
  Status received = comm->engine->wait(receive, &matched);
  const std::string receive_error = received != RCC_SUCCESS ? rcc::last_error() : std::string();
  Status sent = posted == RCC_SUCCESS ? comm->engine->wait(send) : posted;
  if (sent != RCC_SUCCESS) return sent;
  if (received != RCC_SUCCESS) return rcc::fail(received, "%s", receive_error.c_str());
  if (info != nullptr) *info = to_info(comm, matched);
  return RCC_SUCCESS;
}

namespace {

Status wait_named(rcc_request_t request, rcc_msg_info_t* info, const char* function) {
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: request is NULL", function);
  if (!rcc::claim_request(request)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "%s: request is not pending (already completed or freed)", function);
  }
  return finish(request, info);
}

Status test_named(rcc_request_t request, int* done, rcc_msg_info_t* info, const char* function) {
  if (request == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: request is NULL", function);
  if (done == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "%s: done is NULL", function);
  if (!rcc::is_live_request(request)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "%s: request is not pending (already completed or freed)", function);
  }
  bool finished = false;
  RCC_RETURN_IF_ERROR(is_done(request, &finished));
  if (!finished) {
    *done = 0;
    return RCC_SUCCESS;
  }
  *done = 1;
  return wait_named(request, info, function);
}

}  // namespace

extern "C" rcc_status_t rcc_test_info(rcc_request_t request, int* done, rcc_msg_info_t* info) {
  return test_named(request, done, info, "rcc_test_info");
}

extern "C" rcc_status_t rcc_test(rcc_request_t request, int* done) {
  return test_named(request, done, nullptr, "rcc_test");
}

extern "C" rcc_status_t rcc_wait_info(rcc_request_t request, rcc_msg_info_t* info) {
  return wait_named(request, info, "rcc_wait_info");
}

extern "C" rcc_status_t rcc_wait(rcc_request_t request) { return wait_named(request, nullptr, "rcc_wait"); }

extern "C" rcc_status_t rcc_waitall(int n, rcc_request_t* requests) {
  if (n < 0) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_waitall: n %d is negative", n);
  if (requests == nullptr && n > 0) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_waitall: requests is NULL");
  Status first = RCC_SUCCESS;
  std::string first_message;
  for (int i = 0; i < n; ++i) {
    if (requests[i] == nullptr) continue;
    Status status = rcc_wait(requests[i]);
    requests[i] = nullptr;
    if (status != RCC_SUCCESS && first == RCC_SUCCESS) {
      first = status;
      first_message = "rcc_waitall: requests[" + std::to_string(i) + "]: " + rcc::last_error();
    }
  }
  if (first != RCC_SUCCESS) rcc::set_last_error(first_message);
  return first;
}

extern "C" rcc_status_t rcc_waitany(int n, rcc_request_t* requests, int* index) {
  if (n < 0) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_waitany: n %d is negative", n);
  if (requests == nullptr && n > 0) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_waitany: requests is NULL");
  if (index == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_waitany: index is NULL");
  rcc_comm* comm = nullptr;
  for (int i = 0; i < n; ++i) {
    if (requests[i] == nullptr) continue;
    if (!rcc::is_live_request(requests[i])) {
      return rcc::fail(RCC_ERR_INVALID_USAGE, "rcc_waitany: requests[%d] is not pending (already completed or freed)",
                       i);
    }
    if (comm == nullptr) comm = requests[i]->comm;
  }
  if (comm == nullptr) {
    *index = RCC_UNDEFINED;
    return RCC_SUCCESS;
  }
  int found = -1;
  RCC_RETURN_IF_ERROR(poll_until(comm, "rcc_waitany", [&](bool* done) {
    for (int i = 0; i < n && !*done; ++i) {
      if (requests[i] == nullptr) continue;
      RCC_RETURN_IF_ERROR(is_done(requests[i], done));
      if (*done) found = i;
    }
    return Status{RCC_SUCCESS};
  }));
  rcc_request* request = requests[found];
  requests[found] = nullptr;
  *index = found;
  return rcc_wait(request);
}
