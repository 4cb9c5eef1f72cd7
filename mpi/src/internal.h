// The MPI layer's objects behind the handles of mpi.h, and what its files share. The layer uses
// rcc's public C API only (rcc/rcc.h): a communicator is an rcc communicator plus a shadow one for
// the layer's own messages, a request wraps an rcc request (or a task on the communicator's
// worker thread), and a datatype is a flattened typemap that packs and unpacks.
#pragma once

#include <mpi.h>
#include <rcc/rcc.h>

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rcc_mpi {

// What a predefined element is, for the operations the standard allows on it.
enum class Category { kNone, kInteger, kFloat, kByte, kBool, kPair };

// A run of bytes of one element of a datatype, at offset from the element's start.
struct Block {
  ptrdiff_t offset;
  size_t bytes;
};

class Worker;

}  // namespace rcc_mpi

struct rcc_mpi_datatype {
  std::string name;
  bool predefined = false;
  bool committed = false;
  bool is_null = false;
  rcc_mpi::Category category = rcc_mpi::Category::kNone;  // of every element; kNone if mixed
  int basic = -1;                                         // the rcc_datatype_t of every element, or -1 (mixed, pair)
  size_t basic_size = 0;                                  // its size
  std::vector<rcc_mpi::Block> blocks;                     // the typemap, adjacent runs merged, in order
  size_t size = 0;                                        // bytes of data in one element
  ptrdiff_t lb = 0, extent = 0;                           // extent = ub - lb
  ptrdiff_t true_lb = 0, true_extent = 0;
  size_t align = 1;                              // of the widest basic element (the struct rule rounds extents to it)
  bool contiguous = false;                       // one block of `size` bytes and extent == size: elements adjoin
  const rcc_mpi_datatype* pair_value = nullptr;  // pair types: the value's type (the index is an int)
  std::atomic<int> references{1};                // derived: the handle and every request still using it
};

struct rcc_mpi_op {
  enum class Kind { kSum, kProd, kMin, kMax, kLand, kLor, kLxor, kBand, kBor, kBxor, kMinloc, kMaxloc, kUser, kNull };
  Kind kind = Kind::kNull;
  const char* name = "MPI_OP_NULL";
  MPI_User_function* function = nullptr;  // kUser
  bool commute = true;
  bool predefined = true;
};

struct rcc_mpi_group {
  std::vector<int> world_ranks;  // rank i of the group is this rank of MPI_COMM_WORLD
  bool predefined = false;
  bool is_null = false;
};

struct rcc_mpi_errhandler {
  enum class Kind { kFatal, kReturn, kNull } kind = Kind::kNull;
};

struct rcc_mpi_comm {
  rcc_comm_t comm = nullptr;    // the program's traffic
  rcc_comm_t shadow = nullptr;  // the layer's own (user-operation collectives): never matches the program's
  int rank = 0, size = 0;
  std::vector<int> world_ranks;  // the group
  std::string name;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::atomic<int> pending{0};        // the program's requests not yet completed
  std::atomic<uint64_t> sequence{0};  // numbers the layer's collectives: their tags
  std::unique_ptr<rcc_mpi::Worker> worker;
  std::mutex worker_mutex;
  bool predefined = false;
  bool is_null = false;
  bool live = false;
};

struct rcc_mpi_request {
  enum class Kind { kNull, kRcc, kDone, kTask } kind = Kind::kNull;
  rcc_request_t inner = nullptr;  // kRcc, until it completes
  MPI_Comm comm = nullptr;
  bool receive = false;
  bool detached = false;  // MPI_Request_free'd while active: completed and freed by the layer
  // Runs once inner succeeded, with the bytes received (unpacks, frees scratch); returns an MPI
  // error class (0 success) and may say why. May be empty.
  std::function<int(size_t bytes, std::string* message)> finish;
  std::shared_ptr<struct rcc_mpi_task_state> task;  // kTask
  // The outcome, once complete (kDone from the start: a PROC_NULL operation).
  bool complete = false;
  int error = MPI_SUCCESS;
  std::string message;
  MPI_Status status{};
};

// A collective run by the communicator's worker thread; the request waits for done.
struct rcc_mpi_task_state {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  int error = MPI_SUCCESS;
  std::string message;
};

namespace rcc_mpi {

// ---- environment.cc ----
struct State {
  std::mutex mutex;
  bool initialized = false;
  bool finalized = false;
  int thread_level = MPI_THREAD_SINGLE;
  std::vector<MPI_Comm> comms;        // created communicators, in creation order (freed ones removed)
  std::vector<MPI_Request> detached;  // freed by the program while active
};
State& state();
bool initialized();

// ---- errors.cc ----
// Records "function: message" as this thread's last error and hands the class to comm's error
// handler (MPI_COMM_WORLD's when comm is null or invalid): MPI_ERRORS_ARE_FATAL prints it and
// aborts the job, MPI_ERRORS_RETURN returns error_class.
int fail(MPI_Comm comm, int error_class, const char* function, const char* format, ...)
    __attribute__((format(printf, 4, 5)));
// An rcc call failed: its status as a class, rcc's message as the reason.
int fail_rcc(MPI_Comm comm, rcc_status_t status, const char* function);
int error_class_of(rcc_status_t status);
[[noreturn]] void abort_job(int code);

// ---- checks (checks.cc): each returns MPI_SUCCESS or the error already raised ----
int check_initialized(const char* function);
int check_comm(MPI_Comm comm, const char* function);
int check_count(MPI_Comm comm, int count, const char* function, const char* name);
int check_type(MPI_Comm comm, MPI_Datatype type, const char* function, const char* name);
int check_buffer(MPI_Comm comm, const void* buffer, int count, MPI_Datatype type, const char* function,
                 const char* name);
int check_dest(MPI_Comm comm, int rank, const char* function);     // a rank or MPI_PROC_NULL
int check_source(MPI_Comm comm, int rank, const char* function);   // also MPI_ANY_SOURCE
int check_send_tag(MPI_Comm comm, int tag, const char* function);  // >= 0
int check_recv_tag(MPI_Comm comm, int tag, const char* function);  // also MPI_ANY_TAG
int check_root(MPI_Comm comm, int root, const char* function);
int check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type, const char* function);
int check_counts(MPI_Comm comm, const int* counts, const char* function, const char* name);
int check_request_out(MPI_Comm comm, MPI_Request* request, const char* function);

// ---- datatypes.cc ----
// Copies count elements of type at buffer into out (size * count bytes), in typemap order.
void pack(const void* buffer, size_t count, const rcc_mpi_datatype* type, void* out);
// The reverse; bytes may stop short of count whole elements (a shorter message).
void unpack(const void* in, size_t bytes, const rcc_mpi_datatype* type, void* buffer);
// Where the data of a contiguous type's elements starts.
inline const char* data_start(const void* buffer, const rcc_mpi_datatype* type) {
  return static_cast<const char*>(buffer) + (type->blocks.empty() ? 0 : type->blocks.front().offset);
}
inline char* data_start(void* buffer, const rcc_mpi_datatype* type) {
  return static_cast<char*>(buffer) + (type->blocks.empty() ? 0 : type->blocks.front().offset);
}

// Keeps a derived datatype alive while a request uses it (the program may free it meanwhile).
using TypeRef = std::shared_ptr<const rcc_mpi_datatype>;
TypeRef hold(MPI_Datatype type);
void release(MPI_Datatype type);

// ---- ops.cc ----
// Whether op on type runs on rcc's own kernels (a predefined op on a type of one basic kind),
// and with which rcc op; LAND/LOR/LXOR run as BAND/BOR/BXOR on inputs normalised to 0 or 1.
bool native_op(const rcc_mpi_op* op, const rcc_mpi_datatype* type, rcc_op_t* rcc_op, bool* normalise);
// Rewrites count elements (of a basic integer type of `size` bytes) as 0 or 1.
void normalise_logical(void* data, size_t count, size_t size);
// inout[i] = in[i] op inout[i] for count elements of type, laid out as the type says (user
// functions, MINLOC/MAXLOC).
void apply_op(const rcc_mpi_op* op, const void* in, void* inout, int count, MPI_Datatype type);

// ---- comms.cc ----
// Makes `object` the MPI communicator of a new rcc communicator (collective over its ranks: learns
// the group, makes the shadow); parent (may be null) gives the error handler.
int fill_comm(MPI_Comm object, MPI_Comm parent, rcc_comm_t comm, const char* function);
// The same for a new object, *out.
int adopt_comm(MPI_Comm parent, rcc_comm_t comm, const char* function, MPI_Comm* out);
void destroy_comm(MPI_Comm comm);
Worker& worker_of(MPI_Comm comm);

// ---- requests.cc ----
MPI_Request new_request(MPI_Comm comm, rcc_mpi_request::Kind kind);
// A request already complete (a PROC_NULL receive or send).
MPI_Request completed_request(MPI_Comm comm, bool receive);
// The empty status (a null request's): any source, any tag, no bytes.
void set_empty_status(MPI_Status* status);
// An operation with MPI_PROC_NULL: source MPI_PROC_NULL, any tag, no bytes.
void set_proc_null_status(MPI_Status* status);
// Completes and frees the detached requests of comm (all when null).
void reap_detached(MPI_Comm comm);

// ---- collectives: blocking and nonblocking share one body ----
// With request == nullptr the call is blocking: the rcc call is the blocking one and finish runs
// before returning. Otherwise the nonblocking rcc call is made and *request completes later.
using StartCall = std::function<rcc_status_t(rcc_request_t*)>;
int run_collective(MPI_Comm comm, const char* function, const StartCall& start, std::function<int()> finish,
                   MPI_Request* request);
// A collective the layer runs itself over the shadow communicator (user operations): inline when
// blocking, on the communicator's worker thread when not.
using LayerCall = std::function<int(std::string* message)>;
int run_layer_collective(MPI_Comm comm, const char* function, LayerCall body, MPI_Request* request);

// A worker thread per communicator: runs the layer's nonblocking collectives in the order issued
// (the same on every rank, so they match).
class Worker {
 public:
  Worker();
  ~Worker();
  void post(std::function<void()> job);

 private:
  void run();
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

// Scratch memory that a request keeps until it completes.
using Scratch = std::shared_ptr<std::vector<char>>;
inline Scratch scratch(size_t bytes) { return std::make_shared<std::vector<char>>(bytes); }

}  // namespace rcc_mpi
