// Requests: completing, testing and freeing them. A request completes in two steps: `advance`
// moves it to complete (its rcc request finished, its unpacking done) without freeing it, so
// MPI_Testall can look at all before it frees any; `collect` hands its status out and frees it.
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "internal.h"

extern "C" {
struct rcc_mpi_request rcc_mpi_request_null;
}

namespace rcc_mpi {
namespace {

bool is_null(MPI_Request request) { return request == nullptr || request == MPI_REQUEST_NULL; }

// Request objects are reused through a small per-thread cache: a window of small nonblocking
// sends otherwise spends a third of the layer's instructions per message in new and delete
// (callgrind, 8 B windowed bandwidth). A request freed on another thread simply joins that
// thread's cache.
class RequestCache {
 public:
  ~RequestCache() {
    for (MPI_Request request : free_) delete request;
  }
  MPI_Request take() {
    if (free_.empty()) return new rcc_mpi_request;
    MPI_Request request = free_.back();
    free_.pop_back();
    return request;
  }
  void give(MPI_Request request) {
    if (free_.size() >= kKept) {
      delete request;
      return;
    }
    *request = rcc_mpi_request{};  // back to a fresh request; the message keeps its capacity
    free_.push_back(request);
  }

 private:
  static constexpr size_t kKept = 256;  // a typical window of messages in flight
  std::vector<MPI_Request> free_;
};

RequestCache& request_cache() {
  thread_local RequestCache cache;
  return cache;
}

// The outcome of a finished rcc request.
void settle(MPI_Request request, rcc_status_t status, const rcc_msg_info_t& info) {
  request->inner = nullptr;
  request->complete = true;
  request->comm->pending.fetch_sub(1);
  if (status == RCC_ERR_CANCELLED) {
    request->status.rcc_cancelled = 1;
    request->status.MPI_SOURCE = MPI_ANY_SOURCE;
    request->status.MPI_TAG = MPI_ANY_TAG;
    request->status.rcc_bytes = 0;
  } else if (status != RCC_SUCCESS) {
    request->error = error_class_of(status);
    request->message = std::string(rcc_last_error()) + " [" + rcc_status_string(status) + "]";
  } else {
    if (request->receive) {
      request->status.MPI_SOURCE = info.source;
      request->status.MPI_TAG = info.tag;
      request->status.rcc_bytes = info.bytes;
    }
    if (request->finish) request->error = request->finish(info.bytes, &request->message);
  }
  request->finish = nullptr;  // frees the scratch it held
  request->status.MPI_ERROR = request->error;
}

// Moves a request towards completion: waits for it (block) or tests it once.
void advance(MPI_Request request, bool block) {
  if (request->complete) return;
  if (request->kind == rcc_mpi_request::Kind::kRcc) {
    rcc_msg_info_t info{};
    rcc_status_t status;
    if (block) {
      status = rcc_wait_info(request->inner, &info);
    } else {
      int done = 0;
      status = rcc_test_info(request->inner, &done, &info);
      if (status == RCC_SUCCESS && done == 0) return;
    }
    settle(request, status, info);
    return;
  }
  if (request->kind == rcc_mpi_request::Kind::kTask) {
    rcc_mpi_task_state& task = *request->task;
    std::unique_lock<std::mutex> lock(task.mutex);
    if (block) task.changed.wait(lock, [&] { return task.done; });
    if (!task.done) return;
    request->complete = true;
    request->comm->pending.fetch_sub(1);
    request->error = task.error;
    request->message = task.message;
    request->status.MPI_ERROR = task.error;
  }
}

// Hands out a complete request's status, frees it and clears the handle; returns its class.
int collect(MPI_Request* handle, MPI_Status* status, std::string* message) {
  MPI_Request request = *handle;
  if (status != MPI_STATUS_IGNORE) *status = request->status;
  const int error = request->error;
  if (message != nullptr) *message = request->message;
  request_cache().give(request);
  *handle = MPI_REQUEST_NULL;
  return error;
}

int raise_request_error(MPI_Comm comm, int error, const char* function, const std::string& message) {
  return fail(comm, error, function, "%s", message.c_str());
}

int check_array(int count, MPI_Request* requests, const char* function) {
  if (int error = check_initialized(function)) return error;
  if (count < 0) return fail(nullptr, MPI_ERR_COUNT, function, "count %d is negative", count);
  if (count > 0 && requests == nullptr) return fail(nullptr, MPI_ERR_REQUEST, function, "array_of_requests is NULL");
  return MPI_SUCCESS;
}

// Spins, then yields, then sleeps briefly: for waits on several requests at once (a single one
// blocks in rcc, which sleeps on the transport's wakeup).
class Backoff {
 public:
  void idle() {
    ++rounds_;
    if (rounds_ < 2000) return;
    if (rounds_ < 20000) {
      sched_yield();
      return;
    }
    usleep(50);
  }

 private:
  long rounds_ = 0;
};

MPI_Comm comm_of(MPI_Request request) { return request->comm; }

// How many requests the program freed while active are not yet complete (state().detached).
std::atomic<int> g_detached{0};

// Completes and frees the detached requests that have finished, without waiting: run on every
// request the program posts, waits for or tests, so a freed receive's data (unpacked when it
// completes) lands, and its scratch goes, while the program runs.
void reap_finished() {
  if (g_detached.load(std::memory_order_relaxed) == 0) return;
  std::vector<MPI_Request> finished;
  {
    State& s = state();
    std::lock_guard<std::mutex> guard(s.mutex);
    for (MPI_Request request : s.detached) advance(request, false);
    auto it = std::stable_partition(s.detached.begin(), s.detached.end(), [](MPI_Request r) { return !r->complete; });
    finished.assign(it, s.detached.end());
    s.detached.erase(it, s.detached.end());
  }
  g_detached.fetch_sub(static_cast<int>(finished.size()));
  for (MPI_Request request : finished) collect(&request, MPI_STATUS_IGNORE, nullptr);
}

}  // namespace

MPI_Request new_request(MPI_Comm comm, rcc_mpi_request::Kind kind) {
  reap_finished();
  MPI_Request request = request_cache().take();
  request->kind = kind;
  request->comm = comm;
  request->status.MPI_SOURCE = MPI_ANY_SOURCE;
  request->status.MPI_TAG = MPI_ANY_TAG;
  comm->pending.fetch_add(1);
  return request;
}

MPI_Request completed_request(MPI_Comm comm, bool receive) {
  MPI_Request request = request_cache().take();
  request->kind = rcc_mpi_request::Kind::kDone;
  request->comm = comm;
  request->receive = receive;
  request->complete = true;
  set_proc_null_status(&request->status);
  return request;
}

void set_empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->rcc_cancelled = 0;
  status->rcc_bytes = 0;
}

void set_proc_null_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  set_empty_status(status);
  status->MPI_SOURCE = MPI_PROC_NULL;
}

void reap_detached(MPI_Comm comm) {
  std::vector<MPI_Request> mine;
  {
    State& s = state();
    std::lock_guard<std::mutex> guard(s.mutex);
    auto it = std::stable_partition(s.detached.begin(), s.detached.end(),
                                    [&](MPI_Request r) { return comm != nullptr && r->comm != comm; });
    mine.assign(it, s.detached.end());
    s.detached.erase(it, s.detached.end());
  }
  g_detached.fetch_sub(static_cast<int>(mine.size()));
  for (MPI_Request request : mine) {
    advance(request, true);
    collect(&request, MPI_STATUS_IGNORE, nullptr);
  }
}

}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (int error = check_initialized("MPI_Wait")) return error;
  reap_finished();
  if (request == nullptr) return fail(nullptr, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
  if (is_null(*request)) {
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  MPI_Comm comm = comm_of(*request);
  advance(*request, true);
  std::string message;
  const int error = collect(request, status, &message);
  return error == MPI_SUCCESS ? MPI_SUCCESS : raise_request_error(comm, error, "MPI_Wait", message);
}

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (int error = check_initialized("MPI_Test")) return error;
  reap_finished();
  if (request == nullptr || flag == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Test", "request or flag is NULL");
  if (is_null(*request)) {
    *flag = 1;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  MPI_Comm comm = comm_of(*request);
  advance(*request, false);
  if (!(*request)->complete) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  std::string message;
  const int error = collect(request, status, &message);
  return error == MPI_SUCCESS ? MPI_SUCCESS : raise_request_error(comm, error, "MPI_Test", message);
}

// Waitall and Testall share the ending: every request is complete; statuses out, requests freed.
// A failure: MPI_ERR_IN_STATUS with each status's MPI_ERROR set (or the first class when the
// statuses are ignored).
static int collect_all(int count, MPI_Request* requests, MPI_Status* statuses, const char* function) {
  int first = MPI_SUCCESS, failures = 0;
  MPI_Comm comm = nullptr;
  std::string first_message;
  for (int i = 0; i < count; ++i) {
    MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (is_null(requests[i])) {
      set_empty_status(status);
      continue;
    }
    MPI_Comm owner = comm_of(requests[i]);
    std::string message;
    const int error = collect(&requests[i], status, &message);
    if (error != MPI_SUCCESS && failures++ == 0) {
      first = error;
      comm = owner;
      first_message = "array_of_requests[" + std::to_string(i) + "]: " + message;
    }
  }
  if (failures == 0) return MPI_SUCCESS;
  return fail(comm, statuses == MPI_STATUSES_IGNORE ? first : MPI_ERR_IN_STATUS, function, "%d request%s failed; %s",
              failures, failures == 1 ? "" : "s", first_message.c_str());
}

extern "C" int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  if (int error = check_array(count, array_of_requests, "MPI_Waitall")) return error;
  for (int i = 0; i < count; ++i) {
    if (!is_null(array_of_requests[i])) advance(array_of_requests[i], true);
  }
  return collect_all(count, array_of_requests, array_of_statuses, "MPI_Waitall");
}

extern "C" int MPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  if (int error = check_array(count, array_of_requests, "MPI_Testall")) return error;
  if (flag == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
  bool all = true;
  for (int i = 0; i < count; ++i) {
    if (is_null(array_of_requests[i])) continue;
    advance(array_of_requests[i], false);
    all = all && array_of_requests[i]->complete;
  }
  *flag = all ? 1 : 0;
  if (!all) return MPI_SUCCESS;  // none is freed until all are complete
  return collect_all(count, array_of_requests, array_of_statuses, "MPI_Testall");
}

// One pass over the array: the index of the first complete request, MPI_UNDEFINED when every
// entry is null, -1 when some is active but none complete.
static int find_complete(int count, MPI_Request* requests) {
  bool active = false;
  for (int i = 0; i < count; ++i) {
    if (is_null(requests[i])) continue;
    active = true;
    advance(requests[i], false);
    if (requests[i]->complete) return i;
  }
  return active ? -1 : MPI_UNDEFINED;
}

static int collect_one(MPI_Request* requests, int index, MPI_Status* status, const char* function) {
  MPI_Comm comm = comm_of(requests[index]);
  std::string message;
  const int error = collect(&requests[index], status, &message);
  return error == MPI_SUCCESS ? MPI_SUCCESS : raise_request_error(comm, error, function, message);
}

extern "C" int MPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  if (int error = check_array(count, array_of_requests, "MPI_Waitany")) return error;
  if (index == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
  Backoff backoff;
  for (;;) {
    const int found = find_complete(count, array_of_requests);
    if (found == MPI_UNDEFINED) {
      *index = MPI_UNDEFINED;
      set_empty_status(status);
      return MPI_SUCCESS;
    }
    if (found >= 0) {
      *index = found;
      return collect_one(array_of_requests, found, status, "MPI_Waitany");
    }
    backoff.idle();
  }
}

extern "C" int MPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  if (int error = check_array(count, array_of_requests, "MPI_Testany")) return error;
  if (index == nullptr || flag == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Testany", "index or flag is NULL");
  const int found = find_complete(count, array_of_requests);
  if (found == MPI_UNDEFINED) {
    *flag = 1;
    *index = MPI_UNDEFINED;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (found < 0) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  *index = found;
  return collect_one(array_of_requests, found, status, "MPI_Testany");
}

extern "C" int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                            MPI_Status array_of_statuses[]) {
  if (int error = check_array(incount, array_of_requests, "MPI_Waitsome")) return error;
  if (outcount == nullptr || (incount > 0 && array_of_indices == nullptr)) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Waitsome", "outcount or array_of_indices is NULL");
  }
  Backoff backoff;
  for (;;) {
    bool active = false;
    int done = 0;
    for (int i = 0; i < incount; ++i) {
      if (is_null(array_of_requests[i])) continue;
      active = true;
      advance(array_of_requests[i], false);
      if (array_of_requests[i]->complete) array_of_indices[done++] = i;
    }
    if (!active) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    if (done > 0) {
      *outcount = done;
      int first = MPI_SUCCESS, failures = 0;
      MPI_Comm comm = nullptr;
      std::string first_message;
      for (int k = 0; k < done; ++k) {
        MPI_Status* status = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[k];
        MPI_Comm owner = comm_of(array_of_requests[array_of_indices[k]]);
        std::string message;
        const int error = collect(&array_of_requests[array_of_indices[k]], status, &message);
        if (error != MPI_SUCCESS && failures++ == 0) first = error, comm = owner, first_message = message;
      }
      if (failures == 0) return MPI_SUCCESS;
      return fail(comm, array_of_statuses == MPI_STATUSES_IGNORE ? first : MPI_ERR_IN_STATUS, "MPI_Waitsome", "%s",
                  first_message.c_str());
    }
    backoff.idle();
  }
}

extern "C" int MPI_Request_free(MPI_Request* request) {
  if (int error = check_initialized("MPI_Request_free")) return error;
  if (request == nullptr || is_null(*request)) {
    return fail(nullptr, MPI_ERR_REQUEST, "MPI_Request_free", "request is NULL or MPI_REQUEST_NULL");
  }
  advance(*request, false);
  if ((*request)->complete) {
    collect(request, MPI_STATUS_IGNORE, nullptr);
    return MPI_SUCCESS;
  }
  (*request)->detached = true;
  State& s = state();
  {
    std::lock_guard<std::mutex> guard(s.mutex);
    s.detached.push_back(*request);
    g_detached.fetch_add(1);
  }
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

extern "C" int MPI_Cancel(MPI_Request* request) {
  if (int error = check_initialized("MPI_Cancel")) return error;
  if (request == nullptr || is_null(*request)) {
    return fail(nullptr, MPI_ERR_REQUEST, "MPI_Cancel", "request is NULL or MPI_REQUEST_NULL");
  }
  MPI_Request r = *request;
  // Only a receive no message matched yet can be cancelled; anything else completes as it would.
  if (r->complete || r->kind != rcc_mpi_request::Kind::kRcc || !r->receive) return MPI_SUCCESS;
  rcc_status_t status = rcc_cancel(r->inner, nullptr);
  if (status != RCC_SUCCESS) return fail_rcc(r->comm, status, "MPI_Cancel");
  return MPI_SUCCESS;
}

extern "C" int MPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (status == nullptr || flag == nullptr)
    return fail(nullptr, MPI_ERR_ARG, "MPI_Test_cancelled", "status or flag is NULL");
  *flag = status->rcc_cancelled;
  return MPI_SUCCESS;
}
